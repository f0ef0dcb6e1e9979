"""Replies rendered once: what is reused, what is not, and that reuse changes nothing."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from adapters.feishu import render as feishu
from adapters.slack import render as slack
from adapters.telegram import render as telegram
from bot.config import load_config
from bot.engine import build_digest
from bot.models import Digest, Lang, PullAnswer, Reply, Risk
from bot.render.memo import reply_memo
from bot.snapshot import read_snapshot
from testkit import EXAMPLES

ANSWER = PullAnswer(
    repository="acme/lumen", number=1206, title="[rollout] fix: tool parser",
    url="https://github.com/acme/lumen/pull/1206", state="merged",
    summary="Handles <unterminated> XML & keeps going.", type="fix", topics=("rollout",),
    risks=(Risk(pull=1206, severity="medium", summary="Concern <!here>",
                evidence_url="https://github.com/acme/lumen/pull/1206#r1"),),
)


def sample_digest() -> Digest:
    config = load_config(EXAMPLES / "prdigest.toml")
    return build_digest(read_snapshot(EXAMPLES / "snapshot.json"), "2026-W29",
                        repo_config=config.repo("acme/lumen"), lang="en")


def pull_reply(lang: Lang = "en", number: int = 1206) -> Reply:
    answer = ANSWER if number == 1206 else PullAnswer(
        repository="acme/lumen", number=number, title=f"fix {number}",
        url=f"https://github.com/acme/lumen/pull/{number}", state="open", summary="",
        risks=())
    return Reply(kind="pull", lang=lang, pull=answer, mode="risks")


class Counting:
    def __init__(self) -> None:
        self.calls = 0

    def __call__(self, reply: Any, *args: Any, **kwargs: Any) -> list[str]:
        self.calls += 1
        return [f"{reply.kind}:{self.calls}"]


def test_the_same_reply_renders_once_and_each_caller_gets_its_own_list() -> None:
    render = Counting()
    memo = reply_memo(render)
    first = memo(pull_reply())
    again = memo(pull_reply())  # equal, not the same object
    assert render.calls == 1 and first == again and first is not again
    first.append("changed by a caller")
    assert memo(pull_reply()) == ["pull:1"]
    memo(pull_reply("zh"))
    memo(pull_reply(), limit=100)  # other arguments are another entry
    assert render.calls == 3


def test_digests_and_unhashable_replies_always_render() -> None:
    render = Counting()
    memo = reply_memo(render)
    digest = Reply(kind="digest", lang="en", digest=sample_digest())
    memo(digest)
    memo(digest)
    loose = SimpleNamespace(kind="pull")  # not frozen: cannot be a key
    memo(loose)  # type: ignore[arg-type]
    memo(loose)  # type: ignore[arg-type]
    assert render.calls == 4


def test_other_type_errors_are_not_swallowed() -> None:
    def broken(reply: Reply) -> list[str]:
        raise TypeError("template expected a string")

    with pytest.raises(TypeError, match="template expected"):
        reply_memo(broken)(pull_reply())


def test_only_so_many_replies_are_kept() -> None:
    render = Counting()
    memo = reply_memo(render, maxsize=2)
    for number in (1, 2, 3):
        memo(pull_reply(number=number))
    memo(pull_reply(number=1))  # pushed out by 3: rendered again
    assert render.calls == 4
    assert memo.cache_info().currsize == 2  # type: ignore[attr-defined]


@pytest.mark.parametrize(("module", "name"), [(slack, "render_reply_messages"),
                                              (telegram, "render_reply_messages"),
                                              (feishu, "reply_cards")])
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_each_platform_gives_what_it_rendered_fresh(module: Any, name: str, lang: Lang) -> None:
    memoized = getattr(module, name)
    fresh = getattr(module, f"_{name}")
    reply = pull_reply(lang)
    assert memoized(reply) == fresh(reply)
    assert memoized(reply) == fresh(reply)  # from memory this time
    other = pull_reply("zh" if lang == "en" else "en")
    assert memoized(other) == fresh(other) != fresh(reply)
