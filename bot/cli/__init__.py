"""`prdigest` on the command line: init, digest, ask, chat, snapshot, post, serve.

Each module registers its commands on the one Typer app (`bot.cli.app`).
"""

from bot.cli import chat, digest, github, service
from bot.cli.app import app, main

__all__ = ["app", "chat", "digest", "github", "main", "service"]
