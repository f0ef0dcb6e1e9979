"""Title conventions read as their teams write them, with fixtures of our own (hostile
where a title or a body tries to pass for something it is not): conventional prefixes
with scopes in any script, bracket tags, gitmoji, plain sentences, merge commits,
reverts, branch syncs and dependency bumps; security, breaking and revert only from
what maintainers wrote in a title's type, tag, scope, gitmoji or a label, or a CVE id
in the title."""

from __future__ import annotations

from datetime import UTC, datetime

import msgspec
import pytest

from bot.chat.grammar import parse_command
from bot.chat.handler import CommandHandler
from bot.clock import HeldClock
from bot.config import RepoConfig, TopicRule, parse_config
from bot.digests import Digests
from bot.engine import build_digest
from bot.engine.areas import folder_area
from bot.engine.classify import classify
from bot.engine.conventions import bump_subject, bumped, is_branch_sync, parse_title
from bot.engine.headline import said_in
from bot.models import FileChange, Lang, PullRequest, Snapshot
from bot.render import render_digest
from bot.source import SnapshotSource

MERGED = datetime(2026, 7, 15, 3, tzinfo=UTC)


def _pull(number: int, title: str, *, body: str | None = None, author: str = "dev",
          labels: tuple[str, ...] = (), paths: tuple[str, ...] = ("src/app/main.py",),
          lines: int = 40) -> PullRequest:
    return PullRequest(number=number, title=title, url=f"https://github.com/o/r/pull/{number}",
                       author=author, state="merged", merged_at=MERGED, closed_at=MERGED,
                       body=body, labels=labels, additions=lines, deletions=0,
                       files=tuple(FileChange(path=p, additions=lines) for p in paths))


@pytest.mark.parametrize(("title", "modules", "kind", "text"), [
    # Conventional prefixes, scopes in any script, split at 、 / , and full-width marks.
    ("fix(图表): 修复导出为空的问题", ("图表",), "fix", "修复导出为空的问题"),
    ("feat(仪表板、数据大屏)：支持移动端", ("仪表板", "数据大屏"), "feat", "支持移动端"),
    ("refactor(模块甲/模块乙, 模块丙): 调整结构", ("模块甲", "模块乙", "模块丙"), "refactor",
     "调整结构"),
    ("perf（X-Pack）: 优化缓存", ("x-pack",), "perf", "优化缓存"),
    ("pref:调用接口不再区分集群 #13410", (), "perf", "调用接口不再区分集群"),
    ("bug：重试构建时状态错误", (), "fix", "重试构建时状态错误"),
    ("perf: 【PAC】发布时使用用户的描述", ("pac",), "perf", "发布时使用用户的描述"),
    ("feat: 历史模版兼容最新特性#12666", (), "feat", "历史模版兼容最新特性"),
    # Bracket tags.
    ("[Bugfix][ROCm] Fix stale jobs", ("rocm",), "fix", "Fix stale jobs"),
    ("[ckpt, rollout] feat: sharded sync", ("ckpt", "rollout"), "feat", "sharded sync"),
    # A scope with no type, a path's first folder that is not a generic one.
    ("cask/audit: detect incorrect app case", ("cask",), None, "detect incorrect app case"),
    ("utils/git: only mutate describe-cache", ("git",), None, "only mutate describe-cache"),
    ("图表：修复图例", ("图表",), None, "修复图例"),
    # Gitmoji, as a character or a shortcode, alone or before a conventional prefix.
    ("🐛 Fix Foo Git authentication", (), "fix", "Fix Foo Git authentication"),
    ("✨ feat(image): rewrite the viewer", ("image",), "feat", "rewrite the viewer"),
    ("♻️ Remove the conf section", (), "refactor", "Remove the conf section"),
    ("🔥 Remove unused image", (), "refactor", "Remove unused image"),
    ("📝 Update release notes", (), "docs", "Update release notes"),
    ("🚑️ Restore login", (), "fix", "Restore login"),
    ("👷 Use PR Push commit identity", (), "ci", "Use PR Push commit identity"),
    (":sparkles: add dark mode", (), "feat", "add dark mode"),
    ("🦄 Something new", (), None, "Something new"),  # an emoji of no meaning: taken off
    # Plain sentences: no convention, no type from the title itself.
    ("Simplify Git filename ownership branches", (), None,
     "Simplify Git filename ownership branches"),
    ("Support @decorator usage", (), None, "Support @decorator usage"),
    # A merge commit's branch as the title, and a branch name GitHub made a title of.
    ("Merge pull request #12 from acme/fix-login", (), None, "fix-login"),
    ("Pr@dev v2@feat symbol map custom icon", (), "feat", "symbol map custom icon"),
    ("Dev v2@fixexportdata", (), "fix", "exportdata"),
    # The NumPy style: short upper-case types, several of them before one colon.
    ("ENH: Support DLPack for scalars", (), "feat", "Support DLPack for scalars"),
    ("MAINT: pixi-packages: use python 3.15", (), "chore", "pixi-packages: use python 3.15"),
    ("MNT: properly rename release note file", (), "chore",
     "properly rename release note file"),
    ("BLD: make disable-highway work", (), "build", "make disable-highway work"),
    ("TST: skip on wasm", (), "test", "skip on wasm"),
    ("MAINT, TST: Exclude test files", (), "chore", "Exclude test files"),
    ("BUG/ENH: handle 0-d input", (), "fix", "handle 0-d input"),
    # A module first is a module (TYP is an area: type annotations); `main` is no `maint`.
    ("TYP/DOC: release note", ("typ",), None, "release note"),
    ("main: fix startup", ("main",), None, "fix startup"),
    # Doris's style: a type tag, then the change's scopes in parentheses.
    ("[Fix](mongodb-cdc) Fix fullDocument JSON parsing", ("mongodb-cdc",), "fix",
     "Fix fullDocument JSON parsing"),
    ("[Improve](cdc)(MongoDB) optimize type inference", ("cdc", "mongodb"), "feat",
     "optimize type inference"),
    ("[Enhancement] Add JDK 21 support", (), "feat", "Add JDK 21 support"),
    # After a tag that names no type, parentheses are the title's own words.
    ("[ROCm] (experimental) support fp8", ("rocm",), None, "(experimental) support fp8"),
    # A revert in a title's own words is a revert, and one typed so reads as one.
    ("Revert moving `pydantic-core` tests", (), "revert",
     "Revert moving `pydantic-core` tests"),
    ("revert: add response caching", (), "revert", "Revert add response caching"),
    ("Reverse the list order", (), None, "Reverse the list order"),
    # A reference the words need stays (`from #13457`); one a title closes with goes.
    ("docs: drop some changes from #13457", (), "docs", "drop some changes from #13457"),
    ("fix: the login loop #13457", (), "fix", "the login loop"),
    ("maintenance: bump the alerter's netty", (), "chore", "bump the alerter's netty"),
    # A tag holding a type and its scope: the type, and the scope its module.
    ("[Bugfix (rlhf)] Skip model reload during vLLM init", ("rlhf",), "fix",
     "Skip model reload during vLLM init"),
    ("[ROCm (gfx942)] tune the kernel", ("rocm-(gfx942)",), None, "tune the kernel"),
    # A tag naming the issue a PR answers names no module.
    ("[ISSUE #12191]: Add namespace existence check", (), None,
     "Add namespace existence check"),
    ("[#88][core] Trim the cache", ("core",), None, "Trim the cache"),
    ("[Issue-123] fix: retry the login", (), "fix", "retry the login"),
])
def test_title_conventions(title: str, modules: tuple[str, ...], kind: str | None,
                           text: str) -> None:
    parsed = parse_title(title)
    assert (parsed.modules, parsed.type, parsed.text) == (modules, kind, text)


@pytest.mark.parametrize(("title", "kind", "modules"), [
    ('Revert "fix(auth): enforce LDAP login identity match"', "revert", ("auth",)),
    ('Revert "unpack_strategy/dmg: use `diskutil image` on macOS 14+"', "revert",
     ("unpack_strategy",)),
    ("⏪ Restore the old parser", "revert", ()),
])
def test_a_revert_is_its_type_with_the_reverted_titles_modules(
        title: str, kind: str, modules: tuple[str, ...]) -> None:
    parsed = parse_title(title)
    assert (parsed.type, parsed.modules) == (kind, modules)


@pytest.mark.parametrize(("title", "sync"), [
    ("Dev", True), ("dev", True), ("master->dev", True), ("dev -> main", True),
    ("Dev v2", True), ("Merge branch 'dev' into main", True), ("Sync main into dev", True),
    ("release/1.2 -> main", True), ("Merge pull request #5 from acme/dev", True),
    ("Release v1.2.0", False), ("Development guide", False), ("Fix dev server port", False),
    ("Dev v2@fixexportdata", False), ("main: fix crash", False),
    ("chore: auto merge branches", True), ("Merge branches", True),
])
def test_branch_syncs_are_titles_that_only_name_branches(title: str, sync: bool) -> None:
    assert (is_branch_sync(title) or parse_title(title).sync) is sync


@pytest.mark.parametrize(("title", "author", "bump", "subject"), [
    ("⬆ Bump cryptography from 48.0.1 to 50.0.0", "dependabot[bot]", True, "cryptography"),
    ("Bump actions/setup-python from 5 to 6", "dependabot[bot]", True, "actions/setup-python"),
    ("build(deps): bump the bundler group across 2 directories with 10 updates", "mike",
     True, "bundler"),
    ("chore(deps): update dependency eslint to v9", "renovate[bot]", True, "eslint"),
    ("Update dependency ruff to v0.9.1", "renovate[bot]", True, "ruff"),
    ("⬆️ Raise pytest-xdist minimum", "tiangolo", True, "pytest-xdist"),
    # Every dependency at once, as a person writes it.
    ("chore: upgrade deps", "afc163", True, "deps"),
    ("Update all npm dependencies", "afc163", True, "all"),
    ("Update the dependencies table in the README", "afc163", False, ""),
    ("Update readme dependencies", "afc163", False, ""),
    # A person's upgrade of a tool, and a bot's update of something else: no bumps.
    ("Upgrade Hawk to 0.1.13", "konsti", False, ""),
    ("👥 Update FastAPI People - Sponsors", "pr-submit[bot]", False, ""),
    ("bump: show upstream versions in release cooldown", "mike", False, ""),
])
def test_dependency_bumps(title: str, author: str, bump: bool, subject: str) -> None:
    cls = classify(_pull(1, title, author=author), RepoConfig())
    assert cls.bump is bump
    if bump:
        assert bump_subject(cls.short_title) == subject


# --- security, breaking and revert: the maintainers' words only -------------------------


@pytest.mark.parametrize(("title", "body", "labels", "security"), [
    ("[Security] Replace diskcache to eliminate pickle deserialization", None, (), True),
    ("fix(security): guard regex compile with a timeout", None, (), True),
    ("[Bugfix][Security] Fix a race bypassing the remediation", None, (), True),
    ("🔒 Replace pre-commit PAT with PR Push", None, (), True),
    (":lock: Rotate the deploy key", None, (), True),
    ("Fix CVE-2024-12345 in the tar reader", None, (), True),
    ("Patch GHSA-abcd-1234-efgh", None, (), True),
    ("Tighten the upload size check", None, ("security",), True),
    ("Tighten the upload size check", None, ("type: security",), True),
    # Hostile: a body, a name that holds the word, a word of prose.
    ("Fix parser", "Fixes CVE-2024-9999. This is a critical security fix!", (), False),
    ("Add Simple API deserialization benchmark", None, (), False),
    ("Bump open-security-tools/ost-simple-sts from 1 to 2", None, (), False),
    ("支持只读模式，提高安全性", "修复了安全漏洞 CVE-2024-0001", (), False),
    ("Improve security of the CI authorisation", None, (), False),
    ("feat: add a security page to the docs site", None, ("documentation",), False),
    # A label whose name merely holds the word (hyphens join it to others) says nothing.
    ("Update label", None, ("not-security-related-but-named",), False),
])
def test_security_is_what_maintainers_call_it(title: str, body: str | None,
                                              labels: tuple[str, ...], security: bool) -> None:
    assert classify(_pull(1, title, body=body, labels=labels), RepoConfig()).security is security


def test_a_body_that_claims_security_or_a_break_claims_nothing_in_the_digest() -> None:
    """The plain digest (no model) says no security fix, breaking change or CVE for a
    PR whose body alone claims them."""
    hostile = _pull(
        1, "Fix the date parser",
        body="## Summary\nBREAKING CHANGE: everything.\nThis fixes CVE-2024-9999, a critical "
             "security vulnerability (deserialization of untrusted input). 8x H100 used.\n"
             "Signed-off-by: Eve <eve@example.com>\n", lines=120)
    plain = _pull(2, "Add retry to uploads", lines=80)
    snapshot = Snapshot(repository="o/r", pulls=(hostile, plain))
    for lang, words in (("en", ("security", "breaking", "CVE", "measured 8x", "effect (8x")),
                        ("zh", ("安全", "破坏性", "CVE", "实测 8x", "实测效果（8x"))):
        digest = build_digest(snapshot, "2026-W29", repo_config=RepoConfig(), lang=lang)
        assert not any(p.security for p in digest.pulls)
        assert all(not k.figures for k in digest.key_pulls)  # "8x H100" is a GPU count
        for fmt in ("text", "markdown"):
            text = render_digest(digest, fmt)  # type: ignore[arg-type]
            report = text.split("## 本周全部 PR")[0].split("## Every PR")[0]
            for word in words:
                assert word.lower() not in report.lower(), (lang, fmt, word)
            assert "Signed-off-by" not in text


@pytest.mark.parametrize(("title", "labels", "breaking"), [
    ("feat(api)!: drop the v1 endpoints", (), True),
    ("[BREAKING] rename max_len", (), True),
    ("💥 Remove the legacy CLI", (), True),
    ("Drop the v1 endpoints", ("breaking-change",), True),
    ("Drop the v1 endpoints", (), False),
])
def test_breaking_is_what_a_title_or_label_says(title: str, labels: tuple[str, ...],
                                                breaking: bool) -> None:
    cls = classify(_pull(1, title, body="BREAKING CHANGE: all of it", labels=labels),
                   RepoConfig())
    assert cls.breaking is breaking


# --- a zh line carries at least what the title says -------------------------------------


@pytest.mark.parametrize(("title", "line"), [
    ("fix: 解决开启 HTTPS 之后 404 配置丢失的问题", "解决开启 HTTPS 之后 404 配置丢失的问题"),
    ("feat: 容器列表缓存是否显示应用商店容器", "新功能：容器列表缓存是否显示应用商店容器"),
    ("fix(图表): 日期类型的子维度图例显示不全", "【图表】修复：日期类型的子维度图例显示不全"),
    ("fix(图表、仪表板): 修复联动失效", "【图表、仪表板】修复联动失效"),
    ("🐛 Fix Foo Git authentication", "修复：Foo Git authentication"),
    ("⬆ Bump cryptography from 48.0.1 to 50.0.0",
     "构建：Bump cryptography from 48.0.1 to 50.0.0"),
    ("utils/curl: request headers when body is unused",
     "Request headers when body is unused"),  # of no known kind: no "改动：" before it
    ("fix: add missing cuda stream sync in NCCL broadcast wait for complete",
     "修复：Add missing cuda stream sync in NCCL broadcast wait for complete"),
    ("[ckpt] feat: add save_lora_only checkpoint support", "新增 `save_lora_only` 检查点支持"),
])
def test_a_zh_line_never_says_less_than_its_title(title: str, line: str) -> None:
    cls = classify(_pull(1, title), RepoConfig())
    assert said_in(cls, "zh") == line
    assert said_in(cls, "en") == ""


def test_a_chinese_titled_week_keeps_its_titles_and_modules() -> None:
    pulls = (
        _pull(1, "fix(订单): 修复订单导出为空的问题", paths=("src/order/export.ts",), lines=90),
        _pull(2, "feat(订单): 支持批量导出", paths=("src/order/batch.ts",), lines=300),
        _pull(3, "fix(支付): 解决退款重复提交", paths=("src/pay/refund.ts",), lines=60),
        _pull(4, "feat(支付): 新增分账", paths=("src/pay/split.ts",), lines=400),
    )
    digest = build_digest(Snapshot(repository="o/shop", pulls=pulls), "2026-W29",
                          repo_config=RepoConfig(), lang="zh")
    assert {t.title for t in digest.themes} == {"订单", "支付"}
    text, report = render_digest(digest, "text"), render_digest(digest, "markdown")
    for said in ("修复订单导出为空的问题", "支持批量导出", "新增分账"):  # the key PRs
        assert said in text
    assert "解决退款重复提交" in report
    assert "新功能（#" not in text + report and "修复（#" not in text + report


# --- bodies: prose only ------------------------------------------------------------------


def test_a_summary_is_the_bodys_prose_not_its_trailers_tables_or_template() -> None:
    body = (
        "<!-- Thank you for your contribution -->\n"
        "## Checklist\n- [x] I added tests\n- [ ] I updated the docs\n\n"
        "## Summary\nThe cache now expires entries after an hour.\n\n"
        "| Case | Before | After |\n| --- | --- | --- |\n| cold | 2.0s | 1.0s |\n\n"
        "<details><summary>logs</summary>noise</details>\n"
        "## Test plan\nRan the suite.\n\n"
        "---------\n\nSigned-off-by: Eve <eve@example.com>\n"
        "Co-authored-by: Mallory <m@example.com>\n")
    pull = _pull(1, "Expire cache entries", body=body, lines=400)
    digest = build_digest(Snapshot(repository="o/r", pulls=(pull,)), "2026-W29",
                          repo_config=RepoConfig(), lang="en")
    [key] = digest.key_pulls
    assert key.summary == "The cache now expires entries after an hour."
    for fmt in ("text", "markdown"):
        text = render_digest(digest, fmt)  # type: ignore[arg-type]
        for leak in ("Signed-off-by", "Co-authored-by", "| Case", "---", "Checklist",
                     "I added tests", "Ran the suite", "logs"):
            assert leak not in text.split("## Every PR")[0].replace("\n---\n", ""), (fmt, leak)


@pytest.mark.parametrize(("body", "figures"), [
    ("Trained on 8x H100 and 4x A100 nodes.", ()),
    ("We ran it on 16x GPUs for a day.", ()),
    ("Loading is now 2.5x faster.", ("2.5x",)),
    ("A speedup of 3x on decode.", ("3x",)),
    ("Memory drops from 54 GiB to 150 MiB.", ("54 GiB to 150 MiB",)),
    ("About 2% of the requests are retried.", ()),
    ("Latency is 30% lower.", ("30%",)),
])
def test_a_figure_is_an_effect_only_where_the_text_makes_it_one(
        body: str, figures: tuple[str, ...]) -> None:
    pull = _pull(1, "Speed up loading", body=body, lines=200)
    digest = build_digest(Snapshot(repository="o/r", pulls=(pull,)), "2026-W29",
                          repo_config=RepoConfig(), lang="en")
    assert digest.key_pulls[0].figures == figures


def test_a_summary_that_says_the_title_again_is_not_shown() -> None:
    pull = _pull(1, "Add retry to uploads", body="Add retry to uploads.", lines=400)
    digest = build_digest(Snapshot(repository="o/r", pulls=(pull,)), "2026-W29",
                          repo_config=RepoConfig(), lang="en")
    key_prs = render_digest(digest, "markdown").split("## Key PRs at a glance")[1]
    line = next(x for x in key_prs.splitlines() if x.startswith("- **#1 "))
    assert line.count("retry to uploads") == 1, line


def test_a_topic_keyword_is_not_matched_in_a_template_that_lists_every_module() -> None:
    """A PR template with a checklist of every module named each in every PR: a topic
    for one module matched 49 of 56 PRs."""
    template = "## 影响模块\n- [ ] 图表\n- [x] 仪表板\n- [ ] 数据集\n\n## 描述\n调整按钮样式。"
    config = RepoConfig(topics={"图表": TopicRule(keywords=("图表",))})
    assert "图表" not in classify(_pull(1, "fix: 调整按钮样式", body=template), config).topics
    assert "图表" in classify(_pull(2, "fix(图表): 调整图例"), config).topics
    assert "图表" in classify(_pull(3, "fix: 调整", body="图表的图例被裁剪。"), config).topics


# --- key PRs and themes -------------------------------------------------------------------


def test_branch_syncs_and_bumps_are_never_key_and_bumps_are_one_theme() -> None:
    pulls = (
        _pull(1, "Dev", lines=5000), _pull(2, "master->dev", lines=900),
        _pull(3, "⬆ Bump cryptography from 48.0.1 to 50.0.0", author="dependabot[bot]",
              lines=800),
        _pull(4, "Bump gitpython from 3.1.54 to 3.1.57", author="dependabot[bot]", lines=4),
        _pull(5, "feat: add retry to uploads", lines=200),
        _pull(6, "fix: crash on empty upload", lines=30),
    )
    snapshot = Snapshot(repository="o/r", pulls=pulls)
    for lang, heading in (("en", "Dependency updates: 2 updates "
                                 "(cryptography 50.0.0 and gitpython 3.1.57)"),
                          ("zh", "依赖升级：2 个 PR（cryptography 50.0.0 和 gitpython 3.1.57）")):
        digest = build_digest(snapshot, "2026-W29", repo_config=RepoConfig(), lang=lang)
        assert {k.number for k in digest.key_pulls} <= {5, 6}
        deps = next(t for t in digest.themes if t.kind == "dependencies")
        assert set(deps.others) == {3, 4} and not deps.pulls
        assert heading in render_digest(digest, "text")


@pytest.mark.parametrize("title", ["Bump version to 0.12.2", "🔖 Release 2.3.0",
                                   ":bookmark: chore(release): v5.32.5 [skip ci]",
                                   "REL: Prepare for the NumPy 2.5.2 release.",
                                   "Version Packages", "Version Packages (beta)",
                                   "Prepare release v2.14.0b1",
                                   "Release tdesign-vue-next 1.20.1", "Version 0.47.3",
                                   "Merge 6.1.0 release to master",
                                   "chore: merge release to master after releasing 6.0.0"])
def test_a_release_is_never_key_nor_a_dependency_update(title: str) -> None:
    pull = _pull(1, title, author="release-bot[bot]", lines=900)
    cls = classify(pull, RepoConfig())
    assert cls.release and not cls.bump
    digest = build_digest(Snapshot(repository="o/r", pulls=(pull, _pull(2, "feat: x"))),
                          "2026-W29", repo_config=RepoConfig(), lang="en")
    assert [k.number for k in digest.key_pulls] == [2]


def test_a_pr_of_translations_only_is_never_key_however_large() -> None:
    words = _pull(1, "perf: update i18n", lines=1400,
                  paths=("apps/i18n/core/en/LC_MESSAGES/django.po", "web/src/locales/zh.ts"))
    code = _pull(2, "feat: 国际化", lines=300,
                 paths=("web/src/locales/en.ts", "web/src/views/chart/index.vue"))
    digest = build_digest(Snapshot(repository="o/r", pulls=(words, code)), "2026-W29",
                          repo_config=RepoConfig(), lang="en")
    assert [k.number for k in digest.key_pulls] == [2]


def test_a_small_week_keeps_key_prs_selective() -> None:
    pulls = tuple(_pull(n, f"feat: feature number {n}", lines=50 * n) for n in range(1, 7))
    digest = build_digest(Snapshot(repository="o/r", pulls=pulls), "2026-W29",
                          repo_config=RepoConfig(), lang="en")
    assert digest.counts.total == 6 and digest.counts.key == 4
    assert [k.number for k in digest.key_pulls] == [6, 5, 4, 3]  # the largest


def test_the_original_under_a_zh_line_is_escaped_on_the_report_page() -> None:
    from bot.render.html import PageLinks, render_report_page

    hostile = _pull(1, "feat: add retry to uploads", lines=400,
                    body="Adds <script>alert(1)</script> retry to uploads with backoff.")
    digest = build_digest(Snapshot(repository="o/r", pulls=(hostile,)), "2026-W29",
                          repo_config=RepoConfig(), lang="zh")
    page = render_report_page(digest, PageLinks())
    assert "<script>alert(1)</script>" not in page
    assert 'class="original"' in page


@pytest.mark.parametrize(("title", "names", "major"), [
    ("upgrade to TypeScript 6", ("TypeScript 6",), True),
    ("update dependency jsdom to v30", ("jsdom v30",), True),
    ("update actions/setup-node action to v7", ("actions/setup-node v7",), True),
    ("Bump cryptography from 48.0.1 to 50.0.0", ("cryptography 50.0.0",), True),
    ("Bump ruff from 0.8.1 to 0.9.0", ("ruff 0.9.0",), True),
    ("Bump gitpython from 3.1.54 to 3.1.57", ("gitpython 3.1.57",), False),
    ("update dependency postcss to v8.5.23 [security]", ("postcss v8.5.23",), False),
    ("update lint", ("lint",), False),
    ("update all non-major dependencies", (), False),
    # A list is names, so each language joins them its own way.
    ("bump jsoup, springdoc-openapi and gradle-git-properties versions",
     ("jsoup", "springdoc-openapi", "gradle-git-properties"), False),
    ("bump a, b, and c", ("a", "b", "c"), False),
    ("Upgrade Pinia to 4 and Vue Router to 5.2", ("Pinia 4", "Vue Router 5.2"), False),
])
def test_a_dependency_update_is_named_with_the_version_it_goes_to(
        title: str, names: tuple[str, ...], major: bool) -> None:
    assert bumped(title) == (names, major)


def test_a_week_of_bumps_names_the_moves_to_a_new_major_first_and_counts_every_update(
        ) -> None:
    bumps = [_pull(n, title, author="renovate[bot]", lines=10) for n, title in (
        (1, "chore(deps): update lint"), (2, "chore(deps): update all non-major dependencies"),
        (3, "chore(deps): update dependency monaco-editor to ^0.56.0"),
        (4, "chore(deps): update dependency jsdom to v30"),
        (5, "chore(deps): update build"))]
    pulls = (*bumps, _pull(6, "fix(ssr): keep hydration order"))
    digest = build_digest(Snapshot(repository="o/r", pulls=pulls), "2026-W29",
                          repo_config=RepoConfig(), lang="en")
    assert "Dependency updates: 5 updates (jsdom v30, lint, monaco-editor ^0.56.0 and 2 more)" \
        in render_digest(digest, "text")


def test_a_bump_of_several_names_lists_them_in_the_readers_language() -> None:
    pulls = (_pull(1, "upgrade: bump jsoup, springdoc-openapi and gradle-git-properties "
                      "versions", lines=10),
             _pull(2, "fix(ssr): keep hydration order"))
    digest = build_digest(Snapshot(repository="o/r", pulls=pulls), "2026-W29",
                          repo_config=RepoConfig(), lang="zh")
    text = render_digest(digest, "text")
    assert "依赖升级：1 个 PR（jsoup、springdoc-openapi 和 gradle-git-properties）" in text
    assert " and " not in text.split("依赖升级", 1)[1].splitlines()[0]


@pytest.mark.parametrize(("title", "kind", "text"), [
    (":art: Improve configuration initialization https://github.com/o/r/issues/17954",
     "feat", "Improve configuration initialization"),
    (":art: Fix siyuan:// protocol handler in Windows dev environment", "fix",
     "Fix siyuan:// protocol handler in Windows dev environment"),
    ("🎨 Fix the export of empty charts", "fix", "Fix the export of empty charts"),
    (":bug: Fix stale FTS tokens https://github.com/o/r/issues/1 https://ld246.com/a/2",
     "fix", "Fix stale FTS tokens"),
    (":rotating_light: Fix linter warnings", "style", "Fix linter warnings"),
])
def test_a_gitmoji_of_no_kind_lets_the_words_decide_and_trailing_links_go(
        title: str, kind: str, text: str) -> None:
    cls = classify(_pull(1, title), RepoConfig())
    assert cls.type == kind
    assert "http" not in cls.short_title
    assert cls.short_title.lower().endswith(text.split(" ", 1)[1].lower())


def test_a_numpy_style_week_reads_types_as_types_and_typ_as_type_annotations() -> None:
    pulls = (
        _pull(1, "TYP: fix kwarg rejections in specialized gufuncs",
              paths=("numpy/_core/umath.pyi",)),
        _pull(2, "TYP: ``concatenate`` shape-typing", paths=("numpy/_core/multiarray.pyi",)),
        _pull(3, "ENH: Support DLPack for scalars", paths=("numpy/_core/src/dlpack.c",),
              lines=400),
        _pull(4, "MAINT, TST: Exclude test files from coverage", paths=(".coveragerc",)),
    )
    snapshot = Snapshot(repository="numpy/numpy", pulls=pulls)
    for lang, area in (("en", "Type annotations"), ("zh", "类型标注")):
        digest = build_digest(snapshot, "2026-W29", repo_config=RepoConfig(), lang=lang)
        titles = {t.title for t in digest.themes}
        assert area in titles and not titles & {"typ", "enh", "maint"}
        assert {c.name: c.count for c in digest.types}.get("feat") == 1
        listing = render_digest(digest, "markdown")
        # Reading every PR, the title's code is code, not escaped backticks.
        assert "#2 `concatenate` shape-typing" in listing and "\\`" not in listing


@pytest.mark.parametrize(("paths", "lang", "reason"), [
    (("numpy/_core/umath.pyi",), "en", "large change (900 lines in 1 file)"),
    (("a.py", "b.py"), "en", "large change (900 lines in 2 files)"),
    (("numpy/_core/umath.pyi",), "zh", "改动较大（1 个文件共 900 行）"),
])
def test_why_a_large_pr_is_key_counts_its_files_in_the_readers_grammar(
        paths: tuple[str, ...], lang: Lang, reason: str) -> None:
    pull = _pull(1, "fix: kw-only ufunc method params", paths=paths, lines=900)
    digest = build_digest(Snapshot(repository="o/r", pulls=(pull,)), "2026-W29",
                          repo_config=RepoConfig(), lang=lang)
    assert reason in digest.key_pulls[0].reasons


@pytest.mark.parametrize(("lang", "said", "not_said"), [
    ("en", "No PR this week says what kind of change it is (a feature, a fix…). "
           "The busiest topic was AI (3, 100%).", "most PRs were other"),
    ("zh", "本周没有 PR 标明改动类型（新功能、修复等）。", "其他居首"),
])
def test_a_week_whose_titles_say_no_kind_of_change_says_so_not_other(
        lang: Lang, said: str, not_said: str) -> None:
    pulls = tuple(_pull(n, title, paths=("console-ui/src/pages/AI/McpDetail/ShowTools.js",))
                  for n, title in ((1, "Optimizing Swagger import using templates"),
                                   (2, "opt args use aggre options"),
                                   (3, "Develop release3.0.3")))
    digest = build_digest(Snapshot(repository="alibaba/nacos", pulls=pulls), "2026-W29",
                          repo_config=RepoConfig(), lang=lang)
    text = render_digest(digest, "text")
    assert said in text and not_said not in text


def test_a_scope_of_data_types_is_not_the_type_annotations_area() -> None:
    pulls = (_pull(1, "[Feature](type) support doris decimal256 type",
                   paths=("flink-doris-connector/src/main/java/Decimal.java",)),
             _pull(2, "[Fix](type) map DATETIME to TIMESTAMP",
                   paths=("flink-doris-connector/src/main/java/Types.java",)))
    digest = build_digest(Snapshot(repository="apache/doris-flink-connector", pulls=pulls),
                          "2026-W29", repo_config=RepoConfig(), lang="en")
    assert "Type annotations" not in {t.title for t in digest.themes}


@pytest.mark.parametrize(("lang", "glance", "kinds"), [
    ("en", "Revert moving pydantic-core tests", "1 revert"), ("zh", "回滚：", "1 个回滚")])
def test_a_revert_is_no_notable_fix_and_its_line_says_it_reverts(
        lang: Lang, glance: str, kinds: str) -> None:
    pulls = (_pull(1, "Revert moving `pydantic-core` tests", lines=900,
                   paths=("pydantic-core/tests/test_a.py", "tests/test_a.py")),
             _pull(2, "fix: callable discriminators with PEP 695 aliases", lines=300))
    digest = build_digest(Snapshot(repository="pydantic/pydantic", pulls=pulls), "2026-W29",
                          repo_config=RepoConfig(), lang=lang)
    text = render_digest(digest, "text")
    summary = text.split("\n\n")[2]
    assert "#1" not in summary and "#2" in summary, summary
    assert any(glance in line and "#1" in line for line in text.splitlines()), text
    assert kinds in text and "2 fixes" not in text and "2 个修复" not in text, text


def test_a_security_fix_is_named_without_its_type_in_the_security_sentence() -> None:
    pull = _pull(1, "[security] fix: restrict plugin upload endpoint to admin role",
                 paths=("hertzbeat-manager/src/main/java/PluginController.java",))
    digest = build_digest(Snapshot(repository="apache/hertzbeat", pulls=(pull,)), "2026-W29",
                          repo_config=RepoConfig(), lang="zh")
    summary = render_digest(digest, "text").split("\n\n")[2]
    assert "1 个安全修复" in summary and "#1" in summary, summary
    assert "安全修复：修复：" not in summary and "：修复：" not in summary, summary


async def test_asking_what_changed_in_security_finds_the_security_theme() -> None:
    pulls = (_pull(1, "[security] fix: restrict plugin upload endpoint to admin role"),
             _pull(2, "feat(alerter): support Alibaba Cloud Monitor webhook"))
    config = parse_config({"repos": {"apache/hertzbeat": {"timezone": "UTC"}},
                           "channels": [{"platform": "slack", "id": "C1",
                                         "repo": "apache/hertzbeat", "lang": "en"}]})
    handler = CommandHandler(Digests(config, SnapshotSource(Snapshot(
        repository="apache/hertzbeat", fetched_at=MERGED, pulls=pulls)),
        clock=HeldClock(MERGED)))
    reply = await handler.handle(parse_command("what changed in security this week"),
                                 channel=config.channels[0])
    assert reply.answer is not None and [p.number for p in reply.answer.pulls] == [1]


@pytest.mark.parametrize(("title", "base", "sync"), [
    ("Develop", "develop", False), ("dev", "dev", False), ("Develop", "master", True),
    ("Dev", None, True),
])
def test_a_title_that_only_names_the_branch_it_merges_into_is_no_sync(
        title: str, base: str | None, sync: bool) -> None:
    """PaddleX #2281 `Develop` into develop: a contributor's fork branch of that name,
    with a README change of its own."""
    pull = _pull(1, title)
    pull = msgspec.structs.replace(pull, base=base)
    assert classify(pull, RepoConfig()).sync is sync


@pytest.mark.parametrize(("title", "kind", "text"), [
    ("fixRegression: Fix the implementation of visualMap labels overlap. Fix #21586.", "fix",
     "Fix the implementation of visualMap labels overlap."),
    ("featUI: add a dark theme", "feat", "add a dark theme"),
])
def test_a_camel_case_type_word_is_its_type_not_a_module(title: str, kind: str,
                                                         text: str) -> None:
    """echarts' `fixRegression:` made a theme called fixregression."""
    parsed = parse_title(title)
    assert (parsed.type, parsed.modules, parsed.text) == (kind, (), text)


def test_a_tools_folder_is_not_tool_calling() -> None:
    """dubbo-go's `tools/` (a protoc plugin, a benchmark suite) was named 工具调用."""
    assert folder_area(("tools/benchmark/main.go",), "dubbo-go") == "tools"
    assert parse_title("[tool] feat: support parallel tool calls").modules == ("tool",)


@pytest.mark.parametrize(("title", "kind", "text"), [
    ("Refactor/triple comments helpers", "refactor", "triple comments helpers"),
    ("Feat/add login page", "feat", "add login page"),
])
def test_a_title_github_made_from_a_typed_branch_is_read_by_its_type(
        title: str, kind: str, text: str) -> None:
    parsed = parse_title(title)
    assert (parsed.type, parsed.text) == (kind, text)


def test_a_path_scope_is_no_typed_branch() -> None:
    parsed = parse_title("cask/audit: check the url")
    assert (parsed.type, parsed.text) == (None, "check the url")


@pytest.mark.parametrize("title", ["Test/eval mode mismatch in dataloader",
                                   "Demo/API keys leaked in logs", "CI/CD pipeline improvements",
                                   "testUtils: fix flaky helper", "featureFlags: fix crash"])
def test_words_that_only_look_like_a_typed_branch_or_camel_type_are_not_one(
        title: str) -> None:
    parsed = parse_title(title)
    assert parsed.type in (None, "fix") and not parsed.text.startswith("CD"), parsed
    assert parse_title(title).type != "test" and parse_title(title).type != "docs"


def test_merging_a_branch_of_work_is_no_sync_after_a_feature_type() -> None:
    assert not parse_title("feat: merge branch prediction into scheduler").sync
    assert parse_title("chore: merge branches").sync
