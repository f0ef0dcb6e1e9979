"""prdigest: weekly GitHub pull-request digests and PR answers for team chats."""

__version__ = "0.1.0"
