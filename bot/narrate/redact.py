"""Secrets in PR text never reach a prompt: a body or comment that pastes a token, a key
or a password (it happens) is sent with each secret replaced by `[redacted]`.

Secrets are looked for in the text as a reader sees it (NFKC, one character at a time:
full-width `ｇｈｐ_…` is `ghp_…`), and each one found is cut out of the text as written,
so redaction never depends on how a secret was typed. Beyond the vendors' token shapes,
what only looks like a secret goes too: a value assigned to a name ending in `_PASS`,
`_KEY`, `_TOKEN` or `_SECRET`, the password of a connection string or a `mysql -p…`
command line, a PEM body on one line, and any long run of letters and digits that is
as random as a key (base64 or a key of a vendor not listed here).
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections import Counter

REDACTED = "[redacted]"

_SECRETS = re.compile("|".join((
    r"-----BEGIN [A-Z0-9 ]{0,40}-----[\s\S]*?(?:-----END [A-Z0-9 ]{0,40}-----|$)",  # PEM
    r"\bMII[A-Za-z0-9+/]{32,}={0,2}",  # a PEM body on one line (DER in base64)
    r"\bgh[pousr]_[A-Za-z0-9]{20,}",  # GitHub tokens
    r"\bgithub_pat_[A-Za-z0-9_]{20,}",
    r"\bsk-(?:proj-|svcacct-|admin-|ant-)?[A-Za-z0-9_-]{16,}",  # OpenAI-style keys
    r"\borg-[A-Za-z0-9]{20,}",  # OpenAI organisation ids
    r"\bxox[abposr]-[A-Za-z0-9-]{10,}",  # Slack tokens
    r"\bxapp-\d-[A-Za-z0-9-]{10,}",
    r"\b(?:AKIA|ASIA|AGPA|AIDA|AROA|ANPA|ANVA|AIPA)[A-Z0-9]{16}\b",  # AWS access key ids
    r"\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}",  # JWTs
    r"\bAIza[0-9A-Za-z_-]{35}",  # Google API keys
    r"\bGOCSPX-[A-Za-z0-9_-]{20,}",  # Google OAuth client secrets
    r"\bhf_[A-Za-z0-9]{30,}",  # Hugging Face tokens
    r"\bSG\.[A-Za-z0-9_-]{16,}\.[A-Za-z0-9_-]{16,}",  # SendGrid
    r"\b[MNO][A-Za-z0-9_-]{23,27}\.[A-Za-z0-9_-]{6,7}\.[A-Za-z0-9_-]{27,40}",  # Discord bots
    r"\bglpat-[A-Za-z0-9_-]{20,}",  # GitLab
    r"\bnpm_[A-Za-z0-9]{36}\b",  # npm
    r"\bpypi-AgE[A-Za-z0-9_-]{40,}",  # PyPI
    r"\b[rs]k_(?:live|test)_[A-Za-z0-9]{20,}",  # Stripe
    r"\b\d{8,10}:AA[A-Za-z0-9_-]{30,40}",  # Telegram bot tokens
    r"(?<=://)[^\s:/@]*:[^\s@/]+(?=@)",  # user:password in a connection URI
)))
_NAMED = tuple(re.compile(p) for p in (
    # A secret after the word that names it: the word stays, group 1 goes.
    # Authorization values (with a digit: "token classification" is no secret)
    r"(?i)\b(?:bearer|basic|token)\s+((?=[A-Za-z._~+/-]*\d)[A-Za-z0-9._~+/-]{12,}=*)",
    r"(?i)\bauthorization\s*[:=]\s*(?:[a-z]+\s+)?([^\s,;\"']{8,})",
    r"(?i)\b(?:accountkey|sharedaccesskey|sig)=([^;\s&\"']+)",  # Azure connection strings
    r"(?i)\bmysql(?:dump|admin)?\b[^\n|;]*?\s-p([^\s\"']+|\"[^\"]*\"|'[^']*')",  # mysql -pX
))
# `password=...`, `api_key: ...`, `DB_PASS=...`, `OPENAI_KEY=...`: the name stays. A
# token or key name needs a value of 8 characters or more (`max_tokens=4096`,
# `sort_key=len` are no secrets); `*_TOKENS` and `*_KEYS` name counts, not secrets.
_ASSIGNED = re.compile(
    r"(?i)\b((?:[a-z0-9]+_)*(?:password|passwd|pwd|passphrase|secret|pass)(?![a-z])"
    r"[a-z0-9_]*\s*[:=]\s*)(\"[^\"\n]*\"|'[^'\n]*'|[^\s,;]+)|"
    r"\b((?:[a-z0-9]+_)*(?:token|api[_-]?key|access[_-]?key|secret[_-]?key|private[_-]?key|"
    r"client[_-]?secret|key|credentials?|auth)(?![a-z])\s*[:=]\s*)"
    r"(\"[^\"\n]{8,}\"|'[^'\n]{8,}'|[^\s,;]{8,})")
_RUN = re.compile(r"[A-Za-z0-9+/_-]{32,}={0,2}")
ENTROPY_BITS = 4.0
"""Bits per character above which a long run of letters and digits is taken for a key:
random base64 has about 6, English words written together about 3.5, a path or a
snake_case name less."""


def _random(run: str) -> bool:
    """Whether `run` looks like a key: mixed case with digits, and as random as one.
    Lower-case hex (a commit SHA) and paths or names written together are not."""
    if not (re.search(r"[a-z]", run) and re.search(r"[A-Z]", run) and re.search(r"\d", run)):
        return False
    counts = Counter(run)
    bits = -sum(c / len(run) * math.log2(c / len(run)) for c in counts.values())
    return bits >= ENTROPY_BITS


def _spans(read: str) -> list[tuple[int, int]]:
    """Where the secrets are in the folded text `read`."""
    found = [m.span() for m in _SECRETS.finditer(read) if m.end() > m.start()]
    found += [m.span(1) for named in _NAMED for m in named.finditer(read)]
    for m in _ASSIGNED.finditer(read):
        group = 2 if m.group(2) is not None else 4
        if m.group(group) and REDACTED not in m.group(group):
            found.append(m.span(group))
    found += [m.span() for m in _RUN.finditer(read) if _random(m.group(0))]
    merged: list[tuple[int, int]] = []
    for start, end in sorted(found):
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(end, merged[-1][1]))
        else:
            merged.append((start, end))
    return merged


def _folded(text: str) -> tuple[str, list[int]]:
    """`text` under NFKC one character at a time, and for each folded character the
    index of the character of `text` it came from."""
    out: list[str] = []
    origin: list[int] = []
    for i, char in enumerate(text):
        folded = unicodedata.normalize("NFKC", char)
        out.append(folded)
        origin += [i] * len(folded)
    return "".join(out), origin


def redact(text: str) -> str:
    """`text` with every secret it carries replaced by `[redacted]`."""
    if not text:
        return text
    read, origin = _folded(text)
    spans = _spans(read)
    if not spans:
        return text
    out: list[str] = []
    position = 0
    for start, end in spans:
        first, last = origin[start], origin[end - 1] + 1
        out += [text[position:first], REDACTED]
        position = last
    out.append(text[position:])
    return "".join(out)
