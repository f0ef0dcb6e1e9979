"""What `prdigest serve` reads from the environment, for the tests that check the
configuration reference and the deployment files name every variable."""

from __future__ import annotations


def service_variables() -> set[str]:
    """Every environment variable `prdigest serve` reads a secret or setting from: the
    config's `*_env` defaults, the GitHub App's, the report and metrics secrets."""
    import msgspec

    from adapters.registry import PLATFORMS
    from bot.config import Config, LLMConfig
    from bot.github import app
    from bot.links import REPORT_SECRET_ENV
    from bot.web.health import METRICS_TOKEN_ENV

    config = Config()
    sections = (config.github, config.cache, *(spec.settings() for spec in PLATFORMS),
                LLMConfig(base_url="http://x", model="m"))
    named = {getattr(s, f.name) for s in sections for f in msgspec.structs.fields(s)
             if f.name.endswith("_env")}
    return named | {app.APP_ID_ENV, app.PRIVATE_KEY_ENV, app.PRIVATE_KEY_FILE_ENV,
                    app.INSTALLATION_ID_ENV, REPORT_SECRET_ENV, METRICS_TOKEN_ENV}
