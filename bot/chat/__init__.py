"""Chat: the grammar (text -> Command), the handler (Command -> Reply) and the inbound pipeline."""
