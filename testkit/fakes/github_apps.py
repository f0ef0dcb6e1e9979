"""GitHub Apps for the fake GitHub: JWT-authenticated `/app/installations...` endpoints
and installation tokens that expire.

A test registers an App with its public key (`add_app`); a request to `/app/...` must
carry `Authorization: Bearer <JWT>` signed RS256 with the App's private key, issued by
the App's id (`iss`), not expired and at most 10 minutes long - as GitHub checks it.
`POST /app/installations/{id}/access_tokens` mints an installation token valid for
`token_seconds` (GitHub: an hour), which the fake then accepts like a personal token
until it expires.
"""

from __future__ import annotations

import secrets
import threading
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import jwt
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

Answer = tuple[int, dict[str, str], Any]

MAX_JWT_SECONDS = 600 + 60  # GitHub: exp at most 10 minutes ahead (iat may be 60 s back)


def rsa_key() -> tuple[str, str]:
    """(private PEM, public PEM) of a fresh RSA key: an App's key for the tests."""
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    private = key.private_bytes(serialization.Encoding.PEM,
                                serialization.PrivateFormat.TraditionalOpenSSL,
                                serialization.NoEncryption()).decode()
    public = key.public_key().public_bytes(serialization.Encoding.PEM,
                                           serialization.PublicFormat.SubjectPublicKeyInfo
                                           ).decode()
    return private, public


@dataclass
class FakeApp:
    app_id: int
    public_key: str
    installations: dict[int, str]  # installation id -> account login


@dataclass
class FakeApps:
    """The Apps a fake GitHub knows and the installation tokens it minted."""

    token_seconds: float = 3600.0
    apps: dict[int, FakeApp] = field(default_factory=dict)
    minted: dict[str, float] = field(default_factory=dict)  # token -> expiry (epoch)
    exchanges: list[int] = field(default_factory=list)  # installation ids, in order
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def add_app(self, app_id: int, public_key: str, installations: dict[int, str]) -> None:
        self.apps[app_id] = FakeApp(app_id, public_key, dict(installations))

    def accepts(self, token: str) -> bool:
        """Whether `token` is an installation token minted here and still valid."""
        with self._lock:
            expiry = self.minted.get(token)
        return expiry is not None and time.time() < expiry

    def _app(self, authorization: str | None) -> FakeApp | str:
        """The App whose JWT signs the request, or GitHub's complaint."""
        scheme, _, token = (authorization or "").partition(" ")
        if scheme.lower() != "bearer" or not token:
            return "A JSON web token could not be decoded"
        try:
            issuer = jwt.decode(token, options={"verify_signature": False}).get("iss")
            app = self.apps.get(int(issuer))
        except (jwt.PyJWTError, TypeError, ValueError):
            return "A JSON web token could not be decoded"
        if app is None:
            return "Integration not found"
        try:
            claims = jwt.decode(token, app.public_key, algorithms=["RS256"],
                                options={"require": ["exp", "iat", "iss"]})
        except jwt.ExpiredSignatureError:
            return "'Expiration time' claim ('exp') must be a numeric value representing " \
                   "the future time at which the assertion expires"
        except jwt.PyJWTError:
            return "A JSON web token could not be decoded"
        if int(claims["exp"]) - int(claims["iat"]) > MAX_JWT_SECONDS:
            return "'Expiration time' claim ('exp') is too far in the future"
        return app

    def answer(self, method: str, path: str, authorization: str | None, base: str) -> Answer:
        app = self._app(authorization)
        if isinstance(app, str):
            return 401, {}, {"message": app,
                             "documentation_url": "https://docs.github.com/rest"}
        parts = path.strip("/").split("/")
        if parts == ["app", "installations"] and method == "GET":
            return 200, {}, [self._installation(app, i, base) for i in app.installations]
        if len(parts) >= 3 and parts[:2] == ["app", "installations"] and parts[2].isdigit():
            installation = int(parts[2])
            if installation not in app.installations:
                return 404, {}, {"message": "Not Found"}
            if len(parts) == 3 and method == "GET":
                return 200, {}, self._installation(app, installation, base)
            if parts[3:] == ["access_tokens"] and method == "POST":
                return 201, {}, self._mint(installation)
        return 404, {}, {"message": "Not Found"}

    @staticmethod
    def _installation(app: FakeApp, installation: int, base: str) -> dict[str, Any]:
        login = app.installations[installation]
        return {"id": installation, "app_id": app.app_id, "target_type": "Organization",
                "account": {"login": login, "id": installation * 7, "type": "Organization",
                            "url": f"{base}/users/{login}"},
                "access_tokens_url": f"{base}/app/installations/{installation}/access_tokens",
                "repositories_url": f"{base}/installation/repositories",
                "permissions": {"pull_requests": "read", "contents": "read"}}

    def _mint(self, installation: int) -> dict[str, Any]:
        token = f"ghs_{secrets.token_hex(16)}"
        expiry = time.time() + self.token_seconds
        with self._lock:
            self.minted[token] = expiry
            self.exchanges.append(installation)
        expires = datetime.fromtimestamp(expiry, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        return {"token": token, "expires_at": expires, "repository_selection": "all",
                "permissions": {"pull_requests": "read", "contents": "read"}}
