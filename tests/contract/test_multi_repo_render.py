"""Golden payloads of a digest of two repositories on Slack, Telegram and Feishu: each
checked against the platform's rules too, so a golden file cannot freeze a payload the
platform would refuse. `UPDATE_GOLDEN=1` rewrites
them; read the diff before committing it."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import msgspec
import pytest

from adapters.feishu.render import digest_cards
from adapters.slack.render import render_digest_messages
from bot.digests import Digests
from bot.models import Digest, Lang
from bot.source import SnapshotSource
from testkit.feishu_checks import assert_valid as assert_valid_card
from testkit.golden import updating
from testkit.multi_repo import LUMEN, PRISM, WEEK, prism_snapshot, two_repo_config
from testkit.server_support import example_snapshot
from testkit.slack_checks import assert_valid, payloads

GOLDEN = Path(__file__).resolve().parents[1] / "golden"
LANGS: tuple[Lang, ...] = ("en", "zh")


def combined(lang: Lang) -> Digest:
    digests = Digests(two_repo_config(), SnapshotSource(example_snapshot(), prism_snapshot()))
    return asyncio.run(digests.build_many((LUMEN, PRISM), WEEK, lang, ("npu",), link=True))


def _matches(path: Path, rendered: object, update: bool) -> object:
    if update:
        path.write_text(json.dumps(rendered, ensure_ascii=False, indent=2) + "\n")
    return json.loads(path.read_text())


@pytest.mark.parametrize("lang", LANGS)
def test_slack_matches_its_golden_payload(lang: Lang) -> None:
    rendered = payloads(render_digest_messages(combined(lang)))
    golden = _matches(GOLDEN / "slack" / f"multi-repo-digest-{lang}.json", rendered,
                      updating())
    assert isinstance(golden, list)
    for message in golden:
        assert_valid(message)
    assert rendered == golden


@pytest.mark.parametrize("lang", LANGS)
def test_feishu_matches_its_golden_cards(lang: Lang) -> None:
    rendered = digest_cards(combined(lang))
    golden = _matches(GOLDEN / "feishu" / f"multi-repo-digest-{lang}.json", rendered,
                      updating())
    assert isinstance(golden, list)
    for card in golden:
        assert_valid_card(card)
    assert rendered == golden


@pytest.mark.parametrize("lang", LANGS)
def test_the_telegram_golden_case_holds_todays_combined_digest(lang: Lang) -> None:
    """The Telegram case's input is this digest (tests/contract/test_telegram_golden.py
    renders it and checks the messages), so the case follows the engine."""
    path = GOLDEN / "telegram" / f"multi-repo-digest-{lang}" / "input.json"
    digest = msgspec.to_builtins(combined(lang))
    if updating():
        path.parent.mkdir(exist_ok=True)
        path.write_text(json.dumps({"digest": digest}, ensure_ascii=False, indent=2) + "\n")
    assert json.loads(path.read_text())["digest"] == json.loads(json.dumps(digest))
