"""Contract tests: the real platform SDKs against local fake servers."""
