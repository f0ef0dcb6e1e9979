"""Where a week's report lives, and who may open it.

A report lives at `{server.public_url}/reports/{owner}/{repo}/{week}?lang=zh`; the
index of a repository's weeks at `/reports/{owner}/{repo}`. Without `server.public_url`
a chat digest says that path instead of linking. A private repository
(`private = true`) is served only with `?key=`, an HMAC-SHA256 of the repository name
under the secret in `PRDIGEST_REPORT_SECRET`: chat digests of private repositories
carry the signed link. Without that secret private reports are never served and their
digests carry no link.
"""

from __future__ import annotations

import hashlib
import hmac
from urllib.parse import quote, urlencode

import msgspec

from bot.config import Config, secret
from bot.models import Digest, Lang

REPORT_SECRET_ENV = "PRDIGEST_REPORT_SECRET"
"""The environment variable holding the secret that signs links to private reports."""

_KEY_CHARS = 32


def report_key(report_secret: str, repo: str) -> str:
    """The `?key=` that opens every report of `repo` (case-insensitive name)."""
    mac = hmac.new(report_secret.encode(), f"report:{repo.lower()}".encode(), hashlib.sha256)
    return mac.hexdigest()[:_KEY_CHARS]


def private_report_keys(config: Config) -> list[str]:
    """The keys of every private repository's reports (none without the signing
    secret): what the logs must never show, however a line quotes them."""
    report_secret = secret(REPORT_SECRET_ENV)
    if report_secret is None:
        return []
    return [report_key(report_secret, name) for name, repo in config.repos.items()
            if repo.private]


def key_allows(report_secret: str | None, repo: str, key: str | None) -> bool:
    """Whether `key` opens `repo`'s reports; constant-time (as bytes: `compare_digest`
    raises on a str that is not ASCII), and never without a secret."""
    if not report_secret or not key:
        return False
    return hmac.compare_digest(report_key(report_secret, repo).encode(),
                               key.encode("utf-8", "replace"))


def report_path(repo: str, week: str | None = None) -> str:
    """`/reports/owner/name[/week]`, each part percent-encoded."""
    owner, _, name = repo.partition("/")
    path = f"/reports/{quote(owner, safe='')}/{quote(name, safe='')}"
    return f"{path}/{quote(week, safe='')}" if week else path


def report_query(lang: Lang | None = None, key: str | None = None) -> str:
    params = {k: v for k, v in (("lang", lang), ("key", key)) if v}
    return f"?{urlencode(params)}" if params else ""


def report_url(config: Config, repo: str, week: str | None = None, *,
               lang: Lang | None = None) -> str | None:
    """The public address of a report (or of the weeks index when `week` is None).

    None for a repository that is not configured, for a private one while no signing
    secret is set (such a link would only ever answer 404), and while
    `server.public_url` is unset (no address a reader could open).
    """
    where = report_location(config, repo, week, lang=lang)
    base = config.server.public_url
    return f"{base.rstrip('/')}{where}" if where is not None and base else None


def report_location(config: Config, repo: str, week: str | None = None, *,
                    lang: Lang | None = None) -> str | None:
    """Where the service serves a report, its path and query
    (`/reports/acme/lumen/2026-W29?lang=zh`); None where `report_url` is None for the
    repository itself (not configured, or private without a signing secret)."""
    name = _configured_name(config, repo)
    if name is None:
        return None
    key = None
    if config.repo(name).private:
        report_secret = secret(REPORT_SECRET_ENV)
        if report_secret is None:
            return None
        key = report_key(report_secret, name)
    return f"{report_path(name, week)}{report_query(lang, key)}"


def with_report_url(digest: Digest, config: Config) -> Digest:
    """The digest with `report_url` set to its page, in the digest's language; while
    `server.public_url` is unset, with `report_path` set instead (where the service
    serves it), which the chat says rather than linking to an address no one opens.

    What the scheduler and the `digest` command call before rendering, so every chat
    digest links to its full report (private repositories: the signed link).
    """
    url = report_url(config, digest.repository, digest.week, lang=digest.lang)
    path = None if url else report_location(config, digest.repository, digest.week,
                                            lang=digest.lang)
    return msgspec.structs.replace(digest, report_url=url, report_path=path)


def _configured_name(config: Config, repo: str) -> str | None:
    """The configured spelling of `repo` (GitHub names are case-insensitive)."""
    lowered = repo.lower()
    return next((name for name in config.repos if name.lower() == lowered), None)
