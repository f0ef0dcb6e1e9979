"""`prdigest` on the command line: init, digest, ask, chat, snapshot, post, serve,
reload, channels.

Each module registers its commands on the one Typer app (`bot.cli.app`).
"""

from bot.cli import channels, chat, digest, github, service
from bot.cli.app import app, main

__all__ = ["app", "channels", "chat", "digest", "github", "main", "service"]
