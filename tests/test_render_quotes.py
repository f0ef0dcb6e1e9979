"""Review quotes keep their `code` as code in every format, never as literal backticks;
on the report page each risk's PR number links to the PR."""

from __future__ import annotations

import re

import pytest

from adapters.feishu.markup import FeishuMarkup
from adapters.registry import markup_of
from bot.render.markup import code_spans
from testkit.pages import REPORT, app_with
from testkit.server_support import clear_env, serving

QUOTE = "`free_blocks` is read <outside> the lock; ``a ` b`` too, and a lone ` stays"


@pytest.mark.parametrize(("fmt", "expected"), [
    ("telegram", "<code>free_blocks</code> is read &lt;outside&gt; the lock; "
                 "<code>a ` b</code> too, and a lone ` stays"),
    ("html", "<code>free_blocks</code> is read &lt;outside&gt; the lock; "
             "<code>a ` b</code> too, and a lone ` stays"),
    ("text", "free_blocks is read <outside> the lock; a ` b too, and a lone ` stays"),
    ("slack", "`free_blocks` is read &lt;outside&gt; the lock; `a ˋ b` too, and a lone ` stays"),
])
def test_code_in_a_quote_is_the_formats_code(fmt: str, expected: str) -> None:
    assert str(code_spans(markup_of(fmt), QUOTE)) == expected


def test_feishu_keeps_the_spaces_around_code() -> None:
    out = code_spans(FeishuMarkup(), "the `x` and `y` here")
    assert re.fullmatch(r"the `x` and `y` here", out), out


async def test_the_report_page_links_risk_pr_numbers_and_shows_quoted_code(
        monkeypatch: pytest.MonkeyPatch) -> None:
    clear_env(monkeypatch)
    async with serving(app_with()) as http:
        html = (await http.get(f"{REPORT}?lang=en")).text
    risks = html[html.index('id="risks"'):html.index('id="key-prs"')] if 'id="key-prs"' in \
        html else html[html.index('id="risks"'):]
    assert '<a href="https://github.com/acme/lumen/pull/1201">PR#1201</a>' in risks
    assert "<code>free_blocks</code> is read outside the lock" in risks
    assert "`" not in re.sub(r"<code>.*?</code>", "", risks)
