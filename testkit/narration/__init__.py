"""Fixtures of the narrator's tests and bench: a hostile week and a faithful corpus."""
