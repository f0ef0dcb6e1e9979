"""Report pages: the full digest as HTML (same sections as the Markdown report), the
topic chart, zh/en, the weeks index, private repositories, errors as pages."""

from __future__ import annotations

import re
import time

import msgspec
import pytest

from bot.config import Config, parse_config
from bot.engine import build_digest
from bot.errors import SourceError
from bot.links import report_key, report_url, with_report_url
from bot.models import PullRequest, Snapshot
from bot.render import render_digest
from bot.render.html import topic_chart
from bot.source import SnapshotSource, WeekData
from bot.store.keys import Keys
from bot.store.redis.client import sync_client
from bot.store.redis.weeks_index import note_week
from testkit.pages import REPORT, Page, app_with
from testkit.redis_topologies import all_keys
from testkit.server_support import (
    REPO,
    clear_env,
    example_config,
    example_snapshot,
    serving,
)

REDIS_TOPOLOGIES = ("single", "cluster")
"""Each Redis test here runs on one server and on a real Redis Cluster."""
SECTIONS_EN = ["Executive summary", "Key changes", "Module and topic trends",
               "Risk observations", "Key PRs at a glance", "Follow-up suggestions", "People",
               "Every PR of the week, by theme"]
SECTIONS_ZH = ["执行摘要", "本周重点变化", "模块与主题趋势", "风险观察", "重点 PR 速览", "后续建议",
               "参与者", "本周全部 PR（按主题）"]
REPORT_SECRET = "report-signing-secret"


@pytest.fixture(autouse=True)
def _no_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    clear_env(monkeypatch)


def markdown_headings(lang: str) -> list[str]:
    digest = build_digest(example_snapshot(), "2026-W29", repo_config=example_config().repo(REPO),
                          lang=lang, previous=example_snapshot())  # type: ignore[arg-type]
    return re.findall(r"^## (.+)$", render_digest(digest, "markdown"), flags=re.M)


# --- the page ------------------------------------------------------------------------------


@pytest.mark.parametrize(("lang", "sections"), [("en", SECTIONS_EN), ("zh", SECTIONS_ZH)])
async def test_the_page_has_the_markdown_reports_sections(lang: str, sections: list[str]
                                                          ) -> None:
    async with serving(app_with()) as http:
        answer = await http.get(f"{REPORT}?lang={lang}")
    assert answer.status_code == 200
    assert answer.headers["content-type"] == "text/html; charset=utf-8"
    page = Page(answer.text)
    assert page.h2 == sections == markdown_headings(lang)
    assert f'<html lang="{"zh-CN" if lang == "zh" else "en"}">' in answer.text
    assert page.h1 == [{"en": "acme/lumen weekly report, 2026 week 29 (07-13 to 07-19)",
                        "zh": "acme/lumen 2026 年第 29 周周报（07-13 至 07-19）"}[lang]]


async def test_the_page_needs_no_script_and_keeps_github_text_inert() -> None:
    """#1210's title holds `<script>` and `<!channel>`; a title with an event handler and
    a javascript: link is added: all must arrive as text."""
    hostile = msgspec.structs.replace(
        example_snapshot().pulls[0],
        title='[rollout, npu] feat: <img src=x onerror="alert(1)"> [x](javascript:alert(2))')
    snapshot = msgspec.structs.replace(
        example_snapshot(), pulls=(hostile, *example_snapshot().pulls[1:]))
    async with serving(app_with(source=SnapshotSource(snapshot))) as http:
        answer = await http.get(f"{REPORT}?lang=en")
    page = Page(answer.text)
    assert "script" not in page.tags and "img" not in page.tags
    assert page.handlers == []
    assert not any(link.startswith("javascript:") for link in page.links)
    assert "&lt;script&gt; tags and &lt;!channel&gt;" in answer.text
    assert "&lt;img src=x onerror=&#34;alert(1)&#34;&gt;" in answer.text
    csp = answer.headers["content-security-policy"]
    assert "default-src 'none'" in csp and "script-src" not in csp
    assert answer.headers["referrer-policy"] == "no-referrer"
    assert answer.headers["x-content-type-options"] == "nosniff"


async def test_links_go_to_the_prs_the_weeks_around_and_the_other_language() -> None:
    async with serving(app_with()) as http:
        answer = await http.get(f"{REPORT}?lang=en")
    links = Page(answer.text).links
    assert "https://github.com/acme/lumen/pull/1201" in links
    assert "https://github.com/acme/lumen/pull/1201#discussion_r120100" in links  # evidence
    assert "/reports/acme/lumen?lang=en" in links
    assert "/reports/acme/lumen/2026-W28?lang=en" in links
    assert "/reports/acme/lumen/2026-W30?lang=en" in links  # the current week, in progress
    assert "/reports/acme/lumen/2026-W29?lang=zh" in links
    assert "/reports/acme/lumen/2026-W31?lang=en" not in links  # the future has no report


def test_the_topic_chart_is_drawn_to_scale() -> None:
    digest = build_digest(example_snapshot(), "2026-W29", repo_config=example_config().repo(REPO),
                          lang="en", previous=example_snapshot())
    chart = topic_chart(digest.topics, focus=("rollout",), limit=3)
    # Each bar named as the reader sees the topic: its label, a common area's name.
    assert [(b.name, b.count) for b in chart.bars] == [("NPU", 5), ("Rollout", 5),
                                                      ("Checkpoint", 3)]
    assert chart.bars[0].width == chart.max_bar
    assert chart.bars[2].width == pytest.approx(chart.max_bar * 3 / 5, abs=0.1)
    assert [b.focus for b in chart.bars] == [False, True, False]
    assert chart.more == len(digest.topics) - 3
    assert topic_chart(()).bars == ()


async def test_the_chart_is_inline_svg_with_a_bar_per_topic() -> None:
    async with serving(app_with()) as http:
        html = (await http.get(f"{REPORT}?lang=en")).text
    svg = re.search(r"<svg .*?</svg>", html, flags=re.S)
    assert svg is not None
    assert 'role="img"' in svg[0]
    # Nine topics, `[ckpt]` counted as checkpoint: eight bars.
    assert svg[0].count('<rect class="bar') == 8
    assert "<title>NPU: 5 PRs (31%)</title>" in svg[0]


# --- errors --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "status"),
    [
        ("/reports/acme/unknown/2026-W29", 404),
        ("/reports/acme/lumen/2026-W60", 404),
        ("/reports/acme/lumen/2026-W31", 404),   # after the current week
        ("/reports/acme/lumen/1999-W10", 404),
        ("/reports/acme/lumen/nonsense", 404),
        ("/reports/acme/lumen/2026-W29?lang=fr", 400),
        ("/reports/acme/unknown", 404),
    ],
)
async def test_bad_addresses_get_a_page_not_a_traceback(path: str, status: int) -> None:
    async with serving(app_with()) as http:
        answer = await http.get(path)
    assert answer.status_code == status
    assert answer.headers["content-type"].startswith("text/html")
    assert "Traceback" not in answer.text
    assert Page(answer.text).h1


async def test_a_week_spelled_otherwise_redirects_to_its_canonical_address() -> None:
    async with serving(app_with()) as http:
        answer = await http.get("/reports/ACME/Lumen/2026w29?lang=zh")
    assert answer.status_code == 308
    assert answer.headers["location"] == "/reports/acme/lumen/2026-W29?lang=zh"


class GitHubLike:
    """A week's PRs as GitHub would serve them: from a snapshot, yet not a snapshot file
    (a server reading files can serve only the weeks they hold; GitHub, any)."""

    def __init__(self, snapshot: Snapshot) -> None:
        self.file = SnapshotSource(snapshot)

    def fetch_week(self, repo: str, week: str) -> WeekData:
        return self.file.fetch_week(repo, week)

    def fetch_pull(self, repo: str, number: int) -> PullRequest | None:
        return self.file.fetch_pull(repo, number)


class Unreachable(GitHubLike):
    def fetch_week(self, repo: str, week: str) -> WeekData:
        raise SourceError("cannot reach GitHub at https://api.github.com (timed out)")


async def test_github_down_and_nothing_cached_is_a_503_page() -> None:
    async with serving(app_with(source=Unreachable(example_snapshot()))) as http:
        answer = await http.get(f"{REPORT}?lang=zh")
    assert answer.status_code == 503
    assert answer.headers["retry-after"] == "120"
    assert "暂时无法连接 GitHub" in answer.text
    assert "api.github.com" not in answer.text


# --- caching and the index -----------------------------------------------------------------


class Counting(SnapshotSource):
    def __init__(self, snapshot: Snapshot) -> None:
        super().__init__(snapshot)
        self.weeks: list[str] = []

    def fetch_week(self, repo: str, week: str) -> WeekData:
        self.weeks.append(week)
        return super().fetch_week(repo, week)

    def fetch_pull(self, repo: str, number: int) -> PullRequest | None:
        return super().fetch_pull(repo, number)


async def test_a_built_report_is_kept_in_redis_and_listed(redis_url: str) -> None:
    source = Counting(example_snapshot())
    async with serving(app_with(source=source, redis_url=redis_url)) as http:
        first = await http.get(f"{REPORT}?lang=en")
        second = await http.get(f"{REPORT}?lang=en")
        scraped = (await http.get("/metrics")).text
    assert first.text == second.text
    assert source.weeks == ["2026-W29", "2026-W28"]  # the week and, for trends, the one before
    assert 'prdigest_digests_built_total{trigger="report"} 1.0' in scraped
    assert 'prdigest_cache_lookups_total{kind="digest",result="hit"} 1.0' in scraped
    keys = all_keys(sync_client(redis_url), "prdigest:v2:*:digest:report:*")
    assert keys == [b"prdigest:v2:{acme/lumen}:digest:report:2026-W29:en"]


async def test_the_index_lists_recent_weeks_and_every_cached_one(redis_url: str) -> None:
    client, keys, day = sync_client(redis_url), Keys(), 24 * 3600
    note_week(client, keys, "acme/lumen", "2025-W07", day)  # a PR window
    note_week(client, keys, "acme/lumen", "2024-W52", day)  # a report's digest
    note_week(client, keys, "acme/lumen", "2024-W30", day)  # a scheduled post's digest
    note_week(client, keys, "acme/other", "2023-W01", day)  # not this repository
    note_week(client, keys, "acme/lumen", "2031-W01", day)  # future: not listed
    client.zadd(keys.report_weeks("acme/lumen"), {"2022-W01": time.time() - 1})  # expired
    # A v1 key (before hash tags) is ignored, not misread.
    client.set("prdigest:v1:week:acme/lumen:2021-W07:Asia/Shanghai", b"{}")
    async with serving(app_with(source=GitHubLike(example_snapshot()),
                                redis_url=redis_url)) as http:
        answer = await http.get("/reports/acme/lumen?lang=en")
    assert answer.status_code == 200
    weeks = [re.search(r"/(\d{4}-W\d{2})\?", link)[1]  # type: ignore[index]
             for link in Page(answer.text).links if "/reports/acme/lumen/" in link]
    assert weeks == ["2026-W30", "2026-W29", "2026-W28", "2026-W27", "2026-W26", "2026-W25",
                     "2026-W24", "2026-W23", "2025-W07", "2024-W52", "2024-W30"]
    assert "2026-07-13 to 2026-07-19" in answer.text
    assert "in progress" in answer.text


async def test_the_index_without_redis_lists_the_recent_weeks() -> None:
    async with serving(app_with(source=GitHubLike(example_snapshot()))) as http:
        answer = await http.get("/reports/acme/lumen")
    page = Page(answer.text)
    assert page.h1 == ["acme/lumen 周报"]  # the repository's first channel speaks zh
    assert sum("/reports/acme/lumen/" in link for link in page.links) == 8


# --- private repositories -------------------------------------------------------------------


def private_config() -> Config:
    config = example_config()
    repos = {REPO: msgspec.structs.replace(config.repos[REPO], private=True)}
    return msgspec.structs.replace(config, repos=repos)


async def test_a_private_report_needs_its_signed_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PRDIGEST_REPORT_SECRET", REPORT_SECRET)
    key = report_key(REPORT_SECRET, REPO)
    async with serving(app_with(private_config())) as http:
        bare = await http.get(REPORT)
        wrong = await http.get(f"{REPORT}?key={'0' * len(key)}")
        other_repo_key = await http.get(f"{REPORT}?key={report_key(REPORT_SECRET, 'acme/x')}")
        index = await http.get("/reports/acme/lumen")
        unknown = await http.get("/reports/acme/unknown")
        opened = await http.get(f"{REPORT}?lang=en&key={key}")
        opened_index = await http.get(f"/reports/acme/lumen?key={key}")
    for refused in (bare, wrong, other_repo_key, index):
        assert refused.status_code == 404
        # The same answer as for a repository that does not exist.
        assert refused.text == unknown.text
    assert opened.status_code == 200
    assert opened.headers["cache-control"] == "private, no-store"
    links = Page(opened.text).links
    assert f"/reports/acme/lumen?lang=en&key={key}" in links
    assert f"/reports/acme/lumen/2026-W29?lang=zh&key={key}" in links
    assert opened_index.status_code == 200
    assert f"/reports/acme/lumen/2026-W29?lang=zh&key={key}" in Page(opened_index.text).links


async def test_without_a_signing_secret_private_reports_are_never_served() -> None:
    key = report_key("", REPO)
    async with serving(app_with(private_config())) as http:
        answer = await http.get(f"{REPORT}?key={key}")
    assert answer.status_code == 404
    assert report_url(private_config(), REPO, "2026-W29") is None


def test_chat_digests_link_to_the_report(monkeypatch: pytest.MonkeyPatch) -> None:
    digest = build_digest(example_snapshot(), "2026-W29", repo_config=example_config().repo(REPO),
                          lang="en")
    public = with_report_url(digest, example_config())
    assert public.report_url == "http://localhost:8080/reports/acme/lumen/2026-W29?lang=en"
    assert "Full report" in render_digest(public, "text")
    monkeypatch.setenv("PRDIGEST_REPORT_SECRET", REPORT_SECRET)
    private = with_report_url(digest, private_config())
    assert private.report_url == ("http://localhost:8080/reports/acme/lumen/2026-W29?lang=en"
                                  f"&key={report_key(REPORT_SECRET, REPO)}")
    configured = parse_config({
        "repos": {REPO: {}}, "server": {"public_url": "https://bot.example.com/prdigest/"}})
    assert report_url(configured, "ACME/LUMEN") == "https://bot.example.com/prdigest/reports/acme/lumen"
    assert report_url(configured, "someone/else", "2026-W29") is None
