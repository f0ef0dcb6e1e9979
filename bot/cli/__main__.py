"""`python -m bot.cli`: the same as the `prdigest` command."""

from bot.cli import main

main()
