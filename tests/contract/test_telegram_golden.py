"""Golden files for Telegram rendering: `tests/golden/telegram/<case>/input.json` holds a
Digest or a Reply (and optionally a `limit`); `expected.json` the messages sent for it.

Every expected message is also checked the way Telegram checks it (HTML entities parse,
at most the limit after parsing, buttons open http(s) URLs), so a golden file cannot
freeze an answer Telegram would refuse. To add a case, copy `_starter/`, edit
`input.json`, run with `UPDATE_GOLDEN=1` and review the new `expected.json`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import msgspec
import pytest

from adapters.telegram.render import (
    MAX_MESSAGE_CHARS,
    TelegramMessage,
    render_digest_messages,
    render_reply_messages,
)
from bot.models import Digest, Reply
from testkit.fakes.telegram import parse_html, utf16_length
from testkit.golden import updating

GOLDEN = Path(__file__).resolve().parents[1] / "golden" / "telegram"
CASES = sorted(path.name for path in GOLDEN.iterdir() if (path / "input.json").is_file())
UPDATE = updating()


def _render(case: dict[str, Any]) -> tuple[list[TelegramMessage], int]:
    limit = int(case.get("limit", MAX_MESSAGE_CHARS))
    if "digest" in case:
        digest = msgspec.convert(case["digest"], Digest)
        return render_digest_messages(digest, limit=limit), limit
    reply = msgspec.convert(case["reply"], Reply)
    return render_reply_messages(reply, limit=limit), limit


def _as_json(messages: list[TelegramMessage]) -> list[dict[str, Any]]:
    return [
        {"text": m.text,
         "buttons": [[{"text": b.label, "url": b.url} if b.url else
                      {"text": b.label, "callback_data": b.action} for b in row]
                     for row in m.buttons]}
        for m in messages
    ]


def test_there_are_golden_cases() -> None:
    assert "_starter" in CASES and len(CASES) >= 6


@pytest.mark.parametrize("name", CASES)
def test_rendering_matches_the_golden_file(name: str) -> None:
    folder = GOLDEN / name
    case = json.loads((folder / "input.json").read_text(encoding="utf-8"))
    messages, _ = _render(case)
    rendered = _as_json(messages)
    expected_path = folder / "expected.json"
    if UPDATE:
        expected_path.write_text(json.dumps(rendered, ensure_ascii=False, indent=2) + "\n",
                                 encoding="utf-8")
    assert rendered == json.loads(expected_path.read_text(encoding="utf-8"))


@pytest.mark.parametrize("name", CASES)
def test_the_golden_file_is_within_telegrams_limits(name: str) -> None:
    folder = GOLDEN / name
    limit = int(json.loads((folder / "input.json").read_text(encoding="utf-8"))
                .get("limit", MAX_MESSAGE_CHARS))
    expected = json.loads((folder / "expected.json").read_text(encoding="utf-8"))
    assert expected
    for message in expected:
        plain, _ = parse_html(message["text"])
        assert 0 < utf16_length(plain) <= min(limit, MAX_MESSAGE_CHARS)
        for row in message["buttons"]:
            assert 1 <= len(row) <= 8
            for button in row:
                assert button["text"]
                if "url" in button:
                    assert button["url"].startswith(("https://", "http://"))
                else:  # a command, within Telegram's 64 bytes of callback data
                    assert 1 <= len(button["callback_data"].encode()) <= 64
