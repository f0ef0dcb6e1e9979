"""Nineteen forms a secret takes when someone pastes it into a PR description: each as
it is written (`text`) and the part that must never reach a prompt (`value`). Vendors'
tokens, the same token typed in full-width letters, assignments, connection strings,
command lines, PEM keys on several lines and on one, and a key of no known shape.

The values are made up (none is a working credential) and built from pieces, so no
secret scanner takes this file for a leak.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Secret:
    name: str
    text: str
    value: str


def _wide(text: str) -> str:
    """`text` in full-width letters and digits (U+FF01..U+FF5E)."""
    return "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else c for c in text)


_GH = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
_GH_WIDE = "ghp_" + "Z9y8X7w6V5u4T3s2R1q0P9o8N7m6L5k4J3i2"
_PEM_BODY = "MIIEowIBAAKCAQEA7yn3bRHQ5FHMQ" + "x8Jk2Lm9Np4Qr7St0Uv3Wx6Yz1Ab5Cd8Ef2Gh"
_ONE_LINE = "MIIBVgIBADANBgkqhkiG9w0BAQEFAASC" + "AUAwggE8AgEAAkEAq7BFUpkGp3+LQmlQ"
_AZURE = ("Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1" + "OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/"
          "K1SZFPTOtr/KBHBeksoGMGw==")
_DISCORD = "MTA5ODc2NTQzMjEwOTg3NjU0Mw" + ".GhIjKl.AbCdEfGhIjKlMnOpQrStUvWxYz0123456789"
_SENDGRID = "SG." + "ngeVfQFYQlKU0ufo8x5d1A.TwL2iGABf9DHoTf-09kqeF8tAmbihYzrnopKc-1s5cr"
_RANDOM = "q7Vx2LmN9pR4tZ8kW3yB6cF1hJ5dG0sT" + "e2Aa9Uu4Ii7Oo"

SECRETS: tuple[Secret, ...] = (
    Secret("github", f"token {_GH} for the bot", _GH),
    Secret("github-full-width", f"用这个 {_wide(_GH_WIDE)} 登录", _wide(_GH_WIDE)),
    Secret("openai", "OPENAI_API_KEY " + "sk-proj-" + "Abc123Def456Ghi789Jkl012Mno345Pqr678",
           "Abc123Def456Ghi789Jkl012Mno345Pqr678"),
    Secret("slack", "xoxb-" + "123456789012-1234567890123-AbCdEfGhIjKlMnOp",
           "1234567890123-AbCdEfGhIjKlMnOp"),
    Secret("aws-key-id", "aws key " + "AKIA" + "IOSFODNN7EXAMPLE", "IOSFODNN7EXAMPLE"),
    Secret("telegram", "bot " + "123456789:" + "AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsawq",
           "AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsawq"),
    Secret("pem", f"-----BEGIN RSA PRIVATE KEY-----\n{_PEM_BODY}\n-----END RSA PRIVATE KEY-----",
           _PEM_BODY),
    Secret("pem-one-line", f"key: {_ONE_LINE}", _ONE_LINE),
    Secret("password", "password=" + "hunter2-but-longer", "hunter2-but-longer"),
    Secret("connection-uri", "postgres://app:" + "S3cretPassw0rd" + "@db:5432/app",
           "S3cretPassw0rd"),
    Secret("azure", "DefaultEndpointsProtocol=https;AccountName=lumen;AccountKey=" + _AZURE
           + ";EndpointSuffix=core.windows.net", _AZURE),
    Secret("authorization-basic", "curl -H 'Authorization: Basic " + "YWRtaW46c3VwZXJzZWNyZXQ="
           + "' the api", "YWRtaW46c3VwZXJzZWNyZXQ="),
    Secret("discord", f"discord bot {_DISCORD}", _DISCORD),
    Secret("sendgrid", f"mail key {_SENDGRID}", _SENDGRID),
    Secret("db-pass", "DB_PASS=" + "winter2026!", "winter2026!"),
    Secret("openai-org-key", "OPENAI_KEY=" + "org-" + "Xy12Ab34Cd56Ef78Gh90Ij12",
           "Xy12Ab34Cd56Ef78Gh90Ij12"),
    Secret("google-oauth", "client secret " + "GOCSPX-" + "1a2B3c4D5e6F7g8H9i0JkLmNoPq",
           "1a2B3c4D5e6F7g8H9i0JkLmNoPq"),
    Secret("mysql", "run `mysql -u root -p" + "Tr0ub4dor3" + " lumen` to seed it", "Tr0ub4dor3"),
    Secret("unknown-key", f"the staging key is {_RANDOM}", _RANDOM),
)


def planted() -> str:
    """Every form, one per line, as a description that pastes them."""
    return "\n".join(s.text for s in SECRETS) + "\n\n"


def found(sent: str) -> list[str]:
    """The names of the secrets whose values appear in `sent` (prompts as sent)."""
    return [s.name for s in SECRETS if s.value in sent]
