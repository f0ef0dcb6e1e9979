"""Secrets in PR text never reach a prompt: a body or comment that pastes a token, a key
or a password (it happens) is sent with each secret replaced by `[redacted]`."""

from __future__ import annotations

import re

REDACTED = "[redacted]"

_SECRETS = re.compile("|".join((
    r"-----BEGIN [A-Z0-9 ]{0,40}-----[\s\S]*?(?:-----END [A-Z0-9 ]{0,40}-----|$)",  # PEM
    r"\bgh[pousr]_[A-Za-z0-9]{20,}",  # GitHub tokens
    r"\bgithub_pat_[A-Za-z0-9_]{20,}",
    r"\bsk-(?:proj-|svcacct-|admin-|ant-)?[A-Za-z0-9_-]{16,}",  # OpenAI-style keys
    r"\bxox[abposr]-[A-Za-z0-9-]{10,}",  # Slack tokens
    r"\bxapp-\d-[A-Za-z0-9-]{10,}",
    r"\b(?:AKIA|ASIA|AGPA|AIDA|AROA|ANPA|ANVA|AIPA)[A-Z0-9]{16}\b",  # AWS access key ids
    r"\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}",  # JWTs
    r"\bAIza[0-9A-Za-z_-]{35}",  # Google API keys
    r"\bhf_[A-Za-z0-9]{30,}",  # Hugging Face tokens
    r"(?i:\bbearer\s+)[A-Za-z0-9._~+/-]{16,}=*",
    r"\bglpat-[A-Za-z0-9_-]{20,}",  # GitLab
    r"\bnpm_[A-Za-z0-9]{36}\b",  # npm
    r"\bpypi-AgE[A-Za-z0-9_-]{40,}",  # PyPI
    r"\b[rs]k_(?:live|test)_[A-Za-z0-9]{20,}",  # Stripe
    r"\b\d{8,10}:AA[A-Za-z0-9_-]{30,40}",  # Telegram bot tokens
    r"(?<=://)[^\s:/@]+:[^\s@/]+(?=@)",  # user:password in a connection URI
)))
# `password=...`, `api_key: ...`, `aws_secret_access_key = ...`: the name stays. A token
# or key name needs a value of 12 characters or more (`max_tokens=4096` is no secret).
_ASSIGNED = re.compile(
    r"(?i)\b((?:[a-z0-9]+_)*(?:password|passwd|pwd|passphrase|secret)(?![a-z])[a-z0-9_]*"
    r"\s*[:=]\s*)(\"[^\"\n]*\"|'[^'\n]*'|[^\s,;]+)|"
    r"\b((?:[a-z0-9]+_)*(?:token|api[_-]?key|access[_-]?key|secret[_-]?key|private[_-]?key|"
    r"client[_-]?secret)(?![a-z])\s*[:=]\s*)(\"[^\"\n]{12,}\"|'[^'\n]{12,}'|[^\s,;]{12,})")


def redact(text: str) -> str:
    """`text` with every secret it carries replaced by `[redacted]`."""
    out = _SECRETS.sub(REDACTED, text)
    return _ASSIGNED.sub(lambda m: (m.group(1) or m.group(3)) + REDACTED, out)
