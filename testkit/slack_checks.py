"""What a Slack payload must be: within the limits the fake Slack enforces, valid for
slack_sdk's own block models, its markup whole; and the digests and answers the Slack
tests render."""

from __future__ import annotations

import html
import re
from collections.abc import Iterator
from typing import Any

import msgspec
from slack_sdk.models.blocks import Block

from adapters.slack.render import MAX_BLOCKS, SlackMessage
from bot.config import load_config
from bot.engine import build_digest
from bot.models import Digest, KeyPull, Lang, PullAnswer, Risk, Theme
from bot.render import render_digest
from bot.render.chat import CHAT_CEILING, chat_view
from bot.snapshot import read_snapshot
from testkit import EXAMPLES
from testkit.fakes.slack_blocks import block_texts, message_problems

# The only angle-bracket markup the bot writes: links to GitHub.
LINK = re.compile(r"<(https?://[^\s<>|]+)\|([^<>|]+)>")
ENTITY = re.compile(r"&(?:amp|lt|gt);")


def example_digest(lang: Lang) -> Digest:
    config = load_config(EXAMPLES / "prdigest.toml")
    snapshot = read_snapshot(EXAMPLES / "snapshot.json")
    return build_digest(snapshot, "2026-W29", repo_config=config.repo("acme/lumen"), lang=lang)


# Every text Slack would show from a payload (block texts, fields, buttons).
texts_of = block_texts


def urls_of(value: Any) -> Iterator[str]:
    if isinstance(value, dict):
        for key, item in value.items():
            if key == "url" and isinstance(item, str):
                yield item
            else:
                yield from urls_of(item)
    elif isinstance(value, list):
        for item in value:
            yield from urls_of(item)


def markup_problems(text: str) -> list[str]:
    """Angle brackets or ampersands that are not whole links or entities."""
    rest = ENTITY.sub("", LINK.sub("", text))
    return [f"stray {c!r} in {text[:80]!r}" for c in "<>&" if c in rest]


def assert_valid(message: SlackMessage | dict[str, Any]) -> None:
    payload = message.as_post() if isinstance(message, SlackMessage) else message
    assert message_problems(payload) == []
    assert len(payload["blocks"]) <= MAX_BLOCKS
    for block in payload["blocks"]:
        Block.parse(block).to_dict()  # slack_sdk's own checks raise on a bad block
    for text in [payload["text"], *texts_of(payload["blocks"])]:
        assert markup_problems(text) == []


def payloads(messages: list[SlackMessage]) -> list[dict[str, Any]]:
    return [m.as_post() for m in messages]


def pull_numbers(messages: list[SlackMessage]) -> set[int]:
    numbers: set[int] = set()
    for payload in payloads(messages):
        for text in texts_of(payload):
            numbers.update(int(n) for n in re.findall(r"#(\d+)", text))
        for url in urls_of(payload):
            numbers.update(int(n) for n in re.findall(r"/pull/(\d+)", url))
    return numbers


def _escaped(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def slack_visible(text: str) -> int:
    """The characters a reader sees of mrkdwn: a link's label, no bold marks, entities
    as one character."""
    shown = re.sub(r"<[^|>]*\|([^>]*)>", r"\1", text).replace("*", "")
    return len(html.unescape(shown).replace("\n", ""))


def assert_chat_form(messages: list[SlackMessage], digest: Digest, pulls: set[int]) -> str:
    """The chat form arrives whole: one message within Slack's limits and the chat
    budget, holding the chat view's risks, themes, key PRs and suggestions, naming only
    PRs of the week that the full report names too. Returns the text shown."""
    assert len(messages) == 1
    assert_valid(messages[0])
    numbers = pull_numbers(messages)
    assert numbers <= pulls
    assert numbers <= {int(n) for n in re.findall(r"#(\d+)", render_digest(digest, "markdown"))}
    blocks = messages[0].as_post()["blocks"]
    assert sum(slack_visible(t) for t in texts_of(blocks)) <= CHAT_CEILING
    shown = "\n".join(texts_of(blocks))
    view = chat_view(digest)
    for risk in view.risks:
        assert f"*PR#{risk.pull}*" in shown
    assert view.themes
    for theme in view.themes:
        for item in theme.items:
            assert f"|#{item.number}>" in shown
    quick_buttons = [b for b in blocks if b.get("accessory", {}).get("type") == "button"]
    assert [b["accessory"]["url"] for b in quick_buttons] == [k.url for k in view.quick]
    for suggestion in view.suggestions:
        assert _escaped(suggestion) in shown
    return shown


def huge_digest(lang: Lang, risks: int = 120) -> Digest:
    """A week far beyond one message: many risks, long summaries and quotes."""
    base = example_digest(lang)
    url = "https://github.com/acme/lumen/pull/{n}"
    long_text = ("Tokens & <caches> with a link-like <https://x|y> " * 40).strip()
    return msgspec.structs.replace(
        base,
        risks=tuple(Risk(pull=2000 + i, severity=("high", "medium", "low")[i % 3],
                         summary=f"Concern {i}: {long_text[: 150 + (i * 37) % 600]}",
                         evidence_url=url.format(n=2000 + i) + f"#discussion_r{i}",
                         quote="“" * (i % 2) + long_text[: 300])
                    for i in range(risks)),
        key_pulls=tuple(KeyPull(number=3000 + i, title=f"[rollout] feat: feature {i}",
                                short_title=f"feature {i} <!here>", summary=long_text[:1400],
                                url=url.format(n=3000 + i), type="feat")
                        for i in range(6)),
        themes=(Theme(title="All of it", pulls=tuple(3000 + i for i in range(6))),),
        suggestions=tuple(f"Suggestion {i} & more" for i in range(30)),
    )


def pull_answer(title: str = "[rollout] fix: tool parser", risks: int = 2) -> PullAnswer:
    return PullAnswer(
        repository="acme/lumen", number=1206, title=title,
        url="https://github.com/acme/lumen/pull/1206", state="merged",
        summary="Handles <unterminated> XML & keeps going.", type="fix", topics=("rollout",),
        risks=tuple(Risk(pull=1206, severity="medium", summary=f"Concern {i} <!here>",
                         evidence_url=f"https://github.com/acme/lumen/pull/1206#r{i}",
                         quote="<@U0ADMIN1> look")
                    for i in range(risks)),
    )
