"""GitHub App authentication, the alternative to a personal token.

An App installation has a budget of its own (5,000 points an hour and more with the
organisation's size) and is not tied to a person. Set in the environment:
- `GITHUB_APP_ID`: the App's numeric id;
- `GITHUB_APP_PRIVATE_KEY` (the PEM text) or `GITHUB_APP_PRIVATE_KEY_FILE` (its path);
- `GITHUB_APP_INSTALLATION_ID` (optional): without it, the installation on the account
  that owns the repositories is looked up (`GET /app/installations`) on first use.

PyGithub does the exchange: `Auth.AppAuth` signs a short JWT (RS256) with the key,
`Auth.AppInstallationAuth` trades it at `POST /app/installations/{id}/access_tokens`
(at the client's base URL, so a test points it at the fake GitHub) for an installation
token, and trades again 20 s before that token expires (an hour), so every request of
REST and GraphQL alike goes out with a live token. A key that does not load is a
`ConfigError` naming the variable; the key itself is never printed.
"""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from github import Auth
from github.GithubIntegration import GithubIntegration
from github.Requester import Requester, WithRequester

from bot.errors import ConfigError, SourceError

APP_ID_ENV = "GITHUB_APP_ID"
PRIVATE_KEY_ENV = "GITHUB_APP_PRIVATE_KEY"
PRIVATE_KEY_FILE_ENV = "GITHUB_APP_PRIVATE_KEY_FILE"
INSTALLATION_ID_ENV = "GITHUB_APP_INSTALLATION_ID"


@dataclass(frozen=True)
class AppCredentials:
    app_id: str
    private_key: str
    installation_id: int | None

    def __repr__(self) -> str:  # never the key
        return f"AppCredentials(app_id={self.app_id!r}, installation_id={self.installation_id!r})"


def _env(name: str) -> str | None:
    return os.environ.get(name, "").strip() or None


def _load_key(text: str, where: str) -> str:
    """The PEM text, checked to be an RSA private key; the error names `where` only."""
    pem = text.replace("\\n", "\n").strip() + "\n"  # one-line env values spell newlines
    try:
        key = serialization.load_pem_private_key(pem.encode(), password=None)
    except Exception:  # not PEM, encrypted, an unsupported algorithm: all "not a key"
        key = None
    if not isinstance(key, rsa.RSAPrivateKey):
        raise ConfigError(f"{where}: not an RSA private key in PEM format (the .pem file "
                          "GitHub generates in the App's settings)")
    return pem


def app_credentials() -> AppCredentials | None:
    """The App's credentials from the environment; None when `GITHUB_APP_ID` is unset."""
    app_id = _env(APP_ID_ENV)
    if app_id is None:
        return None
    if not app_id.isdigit():
        raise ConfigError(f"{APP_ID_ENV}: expected the App's numeric id (its settings page "
                          "shows it), got a value that is not a number")
    text = _env(PRIVATE_KEY_ENV)
    if text is not None:
        key = _load_key(text, PRIVATE_KEY_ENV)
    else:
        path = _env(PRIVATE_KEY_FILE_ENV)
        if path is None:
            raise ConfigError(f"{APP_ID_ENV} is set: set {PRIVATE_KEY_ENV} to the App's private "
                              f"key, or {PRIVATE_KEY_FILE_ENV} to its .pem file")
        try:
            content = Path(path).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else "unreadable"
            raise ConfigError(f"{PRIVATE_KEY_FILE_ENV}: cannot read {path} ({reason})") from None
        key = _load_key(content, PRIVATE_KEY_FILE_ENV)
    installation = _env(INSTALLATION_ID_ENV)
    if installation is not None and not installation.isdigit():
        raise ConfigError(f"{INSTALLATION_ID_ENV}: expected a number, got {installation!r}")
    return AppCredentials(app_id=app_id, private_key=key,
                          installation_id=int(installation) if installation else None)


class InstallationAuth(Auth.Auth, WithRequester["InstallationAuth"]):
    """The installation's token through PyGithub's `AppInstallationAuth`, the
    installation found on first use when its id is not given.

    `owner`: the account whose installation to use (set by the source from the first
    repository it is asked about, when the config does not tell).
    """

    def __init__(self, credentials: AppCredentials, owner: str | None = None) -> None:
        super().__init__()
        self.credentials = credentials
        self.owner = owner
        self.app = Auth.AppAuth(int(credentials.app_id), credentials.private_key)
        self._installation: Auth.AppInstallationAuth | None = None
        self._lock = threading.Lock()

    def withRequester(self, requester: Requester) -> InstallationAuth:
        super().withRequester(requester)
        return self

    @property
    def token_type(self) -> str:
        return "token"

    @property
    def token(self) -> str:
        with self._lock:  # fetches in several threads share one token and one refresh
            if self._installation is None:
                installation_id = self.credentials.installation_id or self._find()
                self._installation = Auth.AppInstallationAuth(
                    self.app, installation_id, requester=self.requester)
            return self._installation.token

    @property
    def _masked_token(self) -> str:
        return "token (installation token removed)"

    def _find(self) -> int:
        """The installation on `owner`'s account (`GET /app/installations`)."""
        if self.owner is None:
            raise SourceError(f"set {INSTALLATION_ID_ENV}: no repository tells which "
                              "account's installation of the GitHub App to use")
        kwargs: dict[str, Any] = {**self.requester.kwargs, "auth": self.app}
        integration = GithubIntegration(**kwargs)
        try:
            for installation in integration.get_installations():
                account = installation.raw_data.get("account") or {}
                if str(account.get("login", "")).lower() == self.owner.lower():
                    return int(installation.id)
        finally:
            integration.close()
        raise SourceError(f"the GitHub App {self.credentials.app_id} is not installed on "
                          f"{self.owner}: install it there, or set {INSTALLATION_ID_ENV}")
