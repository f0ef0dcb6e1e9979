"""The compact digest (a channel's `style = "compact"`) on Slack, Telegram and Feishu:
golden payloads, each within what the platform accepts, the report link before the
sections, at most about 800 visible characters, the same facts as the full digest.

Goldens: `UPDATE_GOLDEN=1` rewrites them (review the diff).
"""

from __future__ import annotations

import html
import json
import re
from pathlib import Path
from typing import Any

import msgspec
import pytest

from adapters.feishu.render import MAX_REQUEST_BYTES, digest_cards, request_bytes
from adapters.slack.render import render_digest_messages as slack_messages
from adapters.slack.render import slack_length
from adapters.telegram.render import render_digest_messages as telegram_messages
from adapters.telegram.render import visible_length as telegram_length
from bot.config import load_config
from bot.engine import build_digest
from bot.models import ChatForm, Digest, Lang, LoginCount, People
from bot.render.chat import COMPACT_CEILING
from bot.snapshot import read_snapshot
from testkit import EXAMPLES
from testkit.fakes.slack_blocks import message_problems
from testkit.fakes.telegram import parse_html
from testkit.golden import updating

GOLDEN = Path(__file__).resolve().parent.parent / "golden"
LANGS: tuple[Lang, ...] = ("zh", "en")
REPORT = "https://reports.example/r/acme/lumen/2026-W29"
UPDATE = updating()
_SLACK_LINK = re.compile(r"<(https?://[^|>]+)\|([^>]+)>")


def compact_digest(lang: Lang, *, with_people: bool = False, **changes: Any) -> Digest:
    config = load_config(EXAMPLES / "prdigest.toml")
    digest = build_digest(read_snapshot(EXAMPLES / "snapshot.json"), "2026-W29",
                          repo_config=config.repo("acme/lumen"), lang=lang)
    return msgspec.structs.replace(digest, report_url=REPORT,
                                   chat_form=ChatForm(style="compact", people=with_people),
                                   **changes)


def _golden(path: Path, rendered: Any) -> Any:
    if UPDATE:
        path.write_text(json.dumps(rendered, ensure_ascii=False, indent=2) + "\n",
                        encoding="utf-8")
    return json.loads(path.read_text(encoding="utf-8"))


def _slack_texts(value: Any) -> list[str]:
    if isinstance(value, dict):
        return [t for k, v in value.items()
                for t in ([v] if k == "text" and isinstance(v, str) else _slack_texts(v))]
    if isinstance(value, list):
        return [t for v in value for t in _slack_texts(v)]
    return []


def slack_visible(payloads: list[dict[str, Any]]) -> int:
    """What a reader sees of the blocks: text with each link shown as its label."""
    return sum(slack_length(html.unescape(_SLACK_LINK.sub(r"\2", t)))
               for p in payloads for t in _slack_texts(p["blocks"]))


def feishu_visible(cards: list[dict[str, Any]]) -> int:
    link = re.compile(r"\[([^\]]+)\]\([^)]+\)")
    texts = [e["content"] for c in cards for e in c["body"]["elements"] if e["tag"] == "markdown"]
    texts += [c["header"]["title"]["content"] for c in cards]
    return sum(len(html.unescape(link.sub(r"\1", t)).replace("\n", "")) for t in texts)


@pytest.mark.parametrize("lang", LANGS)
def test_slack_compact_matches_its_golden_and_opens_with_the_report_button(lang: Lang) -> None:
    payloads = [m.as_post() for m in slack_messages(compact_digest(lang))]
    golden = _golden(GOLDEN / "slack" / f"compact-digest-{lang}.json", payloads)
    assert payloads == golden
    assert len(payloads) == 1
    assert message_problems(payloads[0]) == []
    blocks = payloads[0]["blocks"]
    # The title, the report's address right under it; its button with the others last.
    assert blocks[0]["type"] == "header" and REPORT in blocks[1]["text"]["text"]
    assert REPORT in [e.get("url") for e in blocks[-1]["elements"]]
    assert "divider" not in [b["type"] for b in blocks]
    assert slack_visible(payloads) <= COMPACT_CEILING


@pytest.mark.parametrize("lang", LANGS)
def test_telegram_compact_is_one_message_with_the_link_under_the_title(lang: Lang) -> None:
    """Its golden is the `compact-digest-<lang>` case of test_telegram_golden.py, whose
    input is this digest (so the case follows the engine)."""
    path = GOLDEN / "telegram" / f"compact-digest-{lang}" / "input.json"
    if updating():
        path.write_text(json.dumps({"digest": msgspec.to_builtins(compact_digest(lang))},
                                   ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
    case = json.loads(path.read_text(encoding="utf-8"))
    assert msgspec.convert(case["digest"], Digest) == compact_digest(lang)
    messages = telegram_messages(compact_digest(lang))
    assert len(messages) == 1
    plain, _ = parse_html(messages[0].text)  # Telegram's own parse: well-formed HTML
    lines = plain.splitlines()
    assert REPORT in lines[1]
    assert telegram_length(messages[0].text) <= COMPACT_CEILING


@pytest.mark.parametrize("lang", LANGS)
def test_feishu_compact_matches_its_golden_with_the_link_first(lang: Lang) -> None:
    cards = digest_cards(compact_digest(lang))
    assert cards == _golden(GOLDEN / "feishu" / f"compact-digest-{lang}.json", cards)
    assert len(cards) == 1 and request_bytes(cards[0]) <= MAX_REQUEST_BYTES
    first = cards[0]["body"]["elements"][0]
    assert first["tag"] == "markdown" and REPORT in first["content"]
    assert feishu_visible(cards) <= COMPACT_CEILING


@pytest.mark.parametrize("lang", LANGS)
def test_every_platform_says_the_full_digests_counts_and_most_severe_risk(lang: Lang) -> None:
    digest = compact_digest(lang)
    worst = digest.risks[0]
    outputs = {
        "slack": json.dumps([m.as_post() for m in slack_messages(digest)], ensure_ascii=False),
        "telegram": "\n".join(m.text for m in telegram_messages(digest)),
        "feishu": json.dumps(digest_cards(digest), ensure_ascii=False),
    }
    total = f"{digest.counts.total} 个 PR" if lang == "zh" else f"{digest.counts.total} PRs"
    risks = f"风险 {len(digest.risks)} 项" if lang == "zh" else f"{len(digest.risks)} risks"
    for platform, text in outputs.items():
        assert total in text, platform
        assert risks in text, platform
        assert f"/pull/{worst.pull}" in text, platform


def test_logins_in_the_people_line_are_escaped_on_every_platform() -> None:
    hostile = "<!channel> <b>x</b> [a](javascript:1) &amp;"
    digest = compact_digest("en", with_people=True, people=People(
        authors=2, top_authors=(LoginCount(login=hostile, count=3),)))
    slack = json.dumps([m.as_post() for m in slack_messages(digest)])
    assert "<!channel>" not in slack and "&lt;!channel&gt;" in slack
    telegram = "\n".join(m.text for m in telegram_messages(digest))
    assert "<b>x</b>" not in telegram and "&lt;b&gt;x&lt;/b&gt;" in telegram
    parse_html(telegram)
    feishu = json.dumps(digest_cards(digest), ensure_ascii=False)
    assert "<b>x</b>" not in feishu and "](javascript:1)" not in feishu


def test_people_stay_out_of_chat_unless_the_channel_asks() -> None:
    asked = compact_digest("en", with_people=True)
    quiet = compact_digest("en")
    assert "people authored" in "\n".join(m.text for m in telegram_messages(asked))
    assert "people authored" not in "\n".join(m.text for m in telegram_messages(quiet))
    full = msgspec.structs.replace(quiet, chat_form=ChatForm())
    assert "people authored" not in json.dumps(digest_cards(full))
    full_asked = msgspec.structs.replace(quiet, chat_form=ChatForm(people=True))
    assert "people authored" in json.dumps(digest_cards(full_asked))
