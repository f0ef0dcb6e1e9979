"""The trends name what is busy and what moved: a topic of one PR is not among "the
busiest" where others hold more, and a topic that moved by one PR since last week is
no trend ("disagg 0 → 1")."""

from __future__ import annotations

from datetime import UTC, datetime

import msgspec

from bot.config import RepoConfig
from bot.engine import build_digest
from bot.models import PullRequest, Snapshot
from bot.narrate.facts import week_facts
from bot.render import render_digest
from testkit.pulls import merged_pull

THIS_WEEK = datetime(2026, 7, 15, 3, tzinfo=UTC)  # 2026-W29
LAST_WEEK = datetime(2026, 7, 8, 3, tzinfo=UTC)  # 2026-W28


def _pull(number: int, title: str, when: datetime = THIS_WEEK) -> PullRequest:
    # A file of no area: the topics come from the titles alone.
    return merged_pull(number, title, (f"n{number}.txt",), lines=20, when=when)


def test_the_busiest_topics_are_busy_and_a_move_of_one_pr_is_no_trend() -> None:
    pulls = (
        *(_pull(n, f"fix(context): case {n}") for n in (1, 2, 3, 4, 5)),
        _pull(6, "fix(recovery): record panics"),
        _pull(7, "fix(disagg): one more"),
        _pull(8, "fix(context): earlier", LAST_WEEK),
        _pull(9, "fix(context): earlier too", LAST_WEEK),
    )
    snapshot = Snapshot(repository="o/r", pulls=pulls)
    digest = build_digest(snapshot, "2026-W29", repo_config=RepoConfig(), lang="en",
                          previous=snapshot)
    text = render_digest(digest, "text")
    assert "The busiest topic was context (5, 71%)." in text, text
    assert "recovery (1" not in text and "disagg 0 → 1" not in text, text
    assert "Compared with last week: context 2 → 5." in text, text


def test_a_themes_line_names_the_prs_it_does_not_type_as_other_changes() -> None:
    pulls = tuple(merged_pull(n, title, (f"src/cache/c{n}.go",)) for n, title in (
        (1, "feat(cache): add ttl"), (2, "fix(cache): evict on write"),
        (3, "cache: tidy the module")))
    for lang, said in (("en", "1 feature, 1 fix, 1 other change"),
                       ("zh", "1 个新功能、1 个修复、另有 1 个改动")):
        digest = build_digest(Snapshot(repository="o/r", pulls=pulls), "2026-W29",
                              repo_config=RepoConfig(), lang=lang)  # type: ignore[arg-type]
        assert said in render_digest(digest, "text"), render_digest(digest, "text")


def test_a_move_since_last_week_counts_an_area_as_the_busiest_topics_do() -> None:
    """A theme also holds the PRs its folder places there: last week's count and this
    week's are taken the same way, so "Models (5" is not followed by "Models 0 → 2"."""
    def in_model(number: int, title: str, when: datetime = THIS_WEEK) -> PullRequest:
        return merged_pull(number, title, (f"model/m{number}.py",), when=when)

    pulls = (
        in_model(1, "feat(model): add qwen3"), in_model(2, "fix(model): load shards"),
        *(in_model(n, f"Support variant {n}") for n in (3, 4, 5)),
        _pull(6, "fix(cli): quote paths"),
        *(in_model(n, f"Support older variant {n}", LAST_WEEK) for n in (7, 8)),
    )
    snapshot = Snapshot(repository="o/r", pulls=pulls)
    digest = build_digest(snapshot, "2026-W29", repo_config=RepoConfig(), lang="en",
                          previous=snapshot)
    text = render_digest(digest, "text")
    assert "The busiest topic was Models (5, 83%)." in text, text
    assert "Compared with last week: Models 2 → 5." in text, text


def test_only_an_area_that_had_prs_last_week_is_said_to_outgrow_its_reviewers() -> None:
    def week(old: int) -> str:
        pulls = (*(_pull(n, f"fix(cache): case {n}") for n in range(1, 6)),
                 _pull(6, "fix(cli): quote paths"),
                 *(_pull(n, f"fix(cache): earlier {n}", LAST_WEEK) for n in range(7, 7 + old)),
                 _pull(20, "fix(cli): earlier", LAST_WEEK))
        snapshot = Snapshot(repository="o/r", pulls=pulls)
        return render_digest(build_digest(snapshot, "2026-W29", repo_config=RepoConfig(),
                                          lang="en", previous=snapshot), "text")
    grown = week(2)
    assert "Check that the cache owners can keep up with reviews: its activity rose from " \
           "2 to 5 PRs." in grown, grown
    new = week(0)
    assert "Compared with last week: cache 0 → 5." in new and "keep up" not in new, new


def test_a_themes_line_counts_test_changes_as_tests() -> None:
    pulls = tuple(merged_pull(n, title, (f"src/cache/c{n}.go",)) for n, title in (
        (1, "fix(cache): evict on write"), (2, "test(cache): parametrize eviction tests")))
    for lang, said in (("en", "1 fix, 1 test change"), ("zh", "1 个修复、1 个测试改动")):
        digest = build_digest(Snapshot(repository="o/r", pulls=pulls), "2026-W29",
                              repo_config=RepoConfig(), lang=lang)  # type: ignore[arg-type]
        text = render_digest(digest, "text")
        assert said in text and "maintenance" not in text and "维护" not in text, text


def test_updates_that_name_nothing_are_only_counted() -> None:
    pulls = (merged_pull(1, "chore: upgrade deps", ("package.json",)),
             merged_pull(2, "chore: upgrade deps", ("package.json",)),
             merged_pull(3, "fix(cache): evict on write", ("src/cache/c.go",)))
    for lang, said, wrong in (("en", "Dependency updates: 2 updates", "more"),
                              ("zh", "依赖升级：2 个 PR", "其余")):
        digest = build_digest(Snapshot(repository="o/r", pulls=pulls), "2026-W29",
                              repo_config=RepoConfig(), lang=lang)  # type: ignore[arg-type]
        line = next(line for line in render_digest(digest, "text").splitlines()
                    if said in line)
        assert wrong not in line and "(" not in line and "（" not in line, line


def test_a_week_of_one_pr_is_not_said_to_be_all_merged() -> None:
    pulls = (merged_pull(1, "fix(cache): evict on write", ("src/cache/c.go",)),)
    digest = build_digest(Snapshot(repository="o/r", pulls=pulls), "2026-W29",
                          repo_config=RepoConfig(), lang="zh")
    for fmt in ("text", "markdown"):
        text = render_digest(digest, fmt)
        assert "本周共处理 1 个 PR（重点 1 个），已合并。" in text, text
        assert "全部已合并" not in text, text
    compact = render_digest(msgspec.structs.replace(
        digest, chat_form=msgspec.structs.replace(digest.chat_form, style="compact")), "text")
    assert "本周共 1 个 PR（重点 1 个），已合并。" in compact, compact
    assert "全部已合并" not in compact, compact


def _week(*pulls: PullRequest, lang: str = "en", fmt: str = "text") -> str:
    digest = build_digest(Snapshot(repository="o/r", pulls=pulls), "2026-W29",
                          repo_config=RepoConfig(), lang=lang)  # type: ignore[arg-type]
    return render_digest(digest, fmt)


def test_topics_tied_at_the_top_are_not_said_to_lead_alone() -> None:
    text = _week(merged_pull(1, "Fix a leak", ("docs/a.md",)),
                 merged_pull(2, "Fix a test", ("tests/test_a.py",)))
    assert "Most of the work was in Docs and Tests, 50% of the PRs each." in text, text
    assert "alone" not in text, text
    zh = _week(merged_pull(1, "Fix a leak", ("docs/a.md",)),
               merged_pull(2, "Fix a test", ("tests/test_a.py",)), lang="zh")
    assert "各占全部 PR 的 50%" in zh, zh


def test_prs_of_no_kind_are_counted_where_they_outnumber_every_kind() -> None:
    pulls = (merged_pull(1, "fix: a crash", ("src/a/x.py",)),
             merged_pull(2, "Changed the pager mode", ("src/a/y.py",)),
             merged_pull(3, "Parametrize the options", ("src/a/z.py",)))
    assert "2 PRs of 3 say no kind of change." in _week(*pulls)
    assert "3 个 PR 中有 2 个没有说明改动类型。" in _week(*pulls, lang="zh")
    typed = (*pulls[:1], merged_pull(4, "fix: another crash", ("src/a/w.py",)))
    assert "say no kind" not in _week(*typed)


def test_one_author_is_not_said_to_lead_others() -> None:
    pulls = (merged_pull(1, "fix: a crash", ("src/a/x.py",)),
             merged_pull(2, "fix: a leak", ("src/a/y.py",)))
    for lang, said in (("en", "Only dev authored PRs this week (2)."),
                       ("zh", "本周只有 dev 提交了 PR（2 个）。")):
        text = _week(*pulls, lang=lang, fmt="markdown")
        assert said in text and "the most came from" not in text, text


def test_prs_of_no_kind_that_do_not_outnumber_a_kind_are_not_counted_apart() -> None:
    pulls = (merged_pull(1, "fix: a crash", ("src/a/x.py",)),
             merged_pull(2, "Changed the pager mode", ("src/a/y.py",)))
    assert "say no kind" not in _week(*pulls) and "says no kind" not in _week(*pulls)


def test_the_narrator_is_told_the_counts_the_trends_say() -> None:
    """The model's facts count an area as the template does ("Models 2 → 5"), so its
    prose cannot say the tag count ("Models 0 → 2") beside the trends."""
    def in_model(number: int, title: str, when: datetime = THIS_WEEK) -> PullRequest:
        return merged_pull(number, title, (f"model/m{number}.py",), when=when)

    pulls = (in_model(1, "feat(model): add qwen3"), in_model(2, "fix(model): load shards"),
             *(in_model(n, f"Support variant {n}") for n in (3, 4, 5)),
             *(in_model(n, f"Support older variant {n}", LAST_WEEK) for n in (7, 8)))
    snapshot = Snapshot(repository="o/r", pulls=pulls)
    digest = build_digest(snapshot, "2026-W29", repo_config=RepoConfig(), lang="en",
                          previous=snapshot)
    facts = week_facts(digest, (), frozenset())
    model = next(t for t in facts.topics if t.name == "model")
    assert (model.count, model.previous) == (5, 2)
