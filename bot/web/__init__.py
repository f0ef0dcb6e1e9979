"""The HTTP service: the app, its composition root, health, report pages, the GitHub webhook."""
