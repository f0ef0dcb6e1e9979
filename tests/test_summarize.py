"""Summaries come from the PR's what/why section; figures stay verbatim."""

from __future__ import annotations

import msgspec
import pytest

from bot.config import RepoConfig
from bot.engine.classify import classify
from bot.engine.digest import answer_pull
from bot.engine.summarize import (
    body_summary,
    change_line,
    figures,
    summarize,
    summary_and_line,
)
from bot.engine.text import sentence_case
from bot.i18n import translator
from bot.models import FileChange, Lang, PullRequest, Reply
from bot.render import render_reply


def test_what_section_first_paragraph() -> None:
    body = ("<!-- template -->\n## Checklist\n- [x] done\n\n### What does this PR do?\n\n"
            "Adds a sparse sync. It is 1.9-3.1x faster.\n\n### Tests\n\nran them")
    assert body_summary(body) == "Adds a sparse sync. It is 1.9-3.1x faster."


def test_boilerplate_bodies_give_no_summary() -> None:
    assert body_summary("### What does this PR do?\n\nAs title.") is None
    assert body_summary("") is None
    assert body_summary(None) is None


def test_long_paragraph_is_cut_at_a_sentence_end() -> None:
    body = "First sentence is here. " + "Second one is much longer " * 30 + "and ends."
    summary = body_summary(body)
    assert summary == "First sentence is here."


def test_figures_are_kept_verbatim() -> None:
    text = "Speeds up by 1.9-3.1x, shrinks 54GiB -> 150MiB, from ~54 GiB to ~150 MiB, 98% less"
    assert figures(text) == ("1.9-3.1x", "54GiB -> 150MiB", "~54 GiB to ~150 MiB")


def test_fallback_from_title_and_files() -> None:
    pull = PullRequest(
        number=1, title="[ci] chore: bump checkout", url="u", state="merged", body="As title.",
        additions=2, deletions=1, files=(FileChange(path=".github/workflows/ci.yml"),),
    )
    summary, described = summarize(pull, classify(pull, RepoConfig()), translator("en"))
    # shown right after the title wherever it appears, so it does not repeat it; what
    # the files say is not the PR's description
    assert summary == "Changes 1 file in .github/workflows (+2/-1 lines)" and not described
    zh, _ = summarize(pull, classify(pull, RepoConfig()), translator("zh"))
    assert "1 个文件" in zh and ".github/workflows" in zh and "bump" not in zh


def test_fallback_names_the_root_and_copes_with_nothing_known() -> None:
    root = PullRequest(number=2, title="docs: fix typo", url="u", state="merged",
                       additions=1, deletions=1, files=(FileChange(path="README.md"),))
    cls = classify(root, RepoConfig())
    assert summarize(root, cls, translator("en")) == (
        "Changes 1 file in the repository root (+1/-1 lines)", False)
    assert "仓库根目录" in summarize(root, cls, translator("zh"))[0]
    counted = PullRequest(number=3, title="fix: x", url="u", state="merged", changed_files=4,
                          additions=9, deletions=2)
    assert summarize(counted, classify(counted, RepoConfig()), translator("en")) == (
        "Changes 4 files (+9/-2 lines)", False)
    bare = PullRequest(number=4, title="fix: y", url="u", state="open")
    assert summarize(bare, classify(bare, RepoConfig()), translator("en")) == (
        "No description given.", False)
    assert summarize(bare, classify(bare, RepoConfig()), translator("zh"))[0] == "未附描述。"


def test_filler_and_the_pr_naming_itself_are_dropped() -> None:
    body = ("### What does this PR do?\n\nThis PR fixes the CP loss scale. That makes sense, "
            "the sequence is split. Thanks @alice for the hint.")
    assert body_summary(body) == "Fixes the CP loss scale."
    assert body_summary("fix: avoid OOM in the mask builder") == (
        "Avoid OOM in the mask builder")


def test_a_sentence_leading_into_a_dropped_code_block_is_not_kept() -> None:
    body = ("Avoid OOM by building the mask as bool.\n\nThe causal mask was built as\n\n"
            "```\ntorch.ones(n, n)\n```\n")
    assert body_summary(body) == "Avoid OOM by building the mask as bool."
    alone = "The causal mask was built as\n\n```\ntorch.ones(n, n)\n```\n"
    summary = body_summary(alone)
    assert summary is not None and summary.endswith("…")


def test_list_items_are_sentences_and_a_lead_in_is_dropped() -> None:
    body = ("### What does this PR do?\n\nThis PR\n1. supports streaming prompts.\n"
            "2. improves the drop strategy\n")
    assert body_summary(body) == "Supports streaming prompts. Improves the drop strategy."
    body = "The main modifications are as follows:\n\n- Added a quick start case.\n"
    assert body_summary(body) == "Added a quick start case."


def test_a_cut_sentence_ends_with_an_ellipsis_at_a_clause() -> None:
    body = "Adds delta sync — a sparse engine: " + "only a few bytes change, " * 20 + "so less."
    summary = body_summary(body)
    assert summary is not None and summary.endswith("…") and len(summary) <= 320
    assert not summary.endswith(",…")


def test_a_share_of_bytes_is_not_a_measured_effect() -> None:
    assert figures("only ~1–3% of parameter bytes actually change") == ()
    assert figures("a 27B model needs 54 GiB") == ()
    assert figures("step time drops 12% on the 7B recipe") == ("12%",)
    assert figures("reduces size from ~54 GiB to ~150 MiB") == ("~54 GiB to ~150 MiB",)


def test_a_line_that_only_points_at_a_link_gives_way_to_the_title() -> None:
    """verl #7039's body opens "Seeing https://github.com/.../pull/6951, it changed ...":
    as the one line beside the PR number, the title says what the PR does."""
    pull = PullRequest(
        number=7039, title="[env] chore: add megatron-bridge in sglang docker env", url="u",
        state="merged",
        body="### What does this PR do?\n\nSeeing https://github.com/verl-project/verl/pull/"
             "6951, it changed the default value used by the bridge to megatron-bridge.",
    )
    summary, line = summary_and_line(pull, classify(pull, RepoConfig()), translator("en"))
    assert line == "Add megatron-bridge in sglang docker env."
    assert "6951" in summary


def test_a_sentence_opening_with_what_led_to_the_change_is_said_by_its_result() -> None:
    """A body whose only change sentence opens with its cause ("The new loader adds it
    so ...") and refers back with "it": the line is the result clause, which stands alone."""
    pull = PullRequest(
        number=1, title="[data] fix: chunk_size falls back to batch_size", url="u",
        state="merged",
        body="### What does this PR do?\n\nThe old loader assumes `chunk_size` is unset. "
             "The new loader adds it so the old `chunk_size` should fall back to "
             "`batch_size` again.",
    )
    _, line = summary_and_line(pull, classify(pull, RepoConfig()), translator("en"))
    assert line == "The old chunk_size should fall back to batch_size again."


def test_a_sentence_that_opens_with_a_change_verb_keeps_its_so_clause() -> None:
    pull = PullRequest(
        number=2, title="[data] feat: cache shards", url="u", state="merged",
        body="### What does this PR do?\n\nCaches the decoded shards so the second epoch "
             "should start at once.",
    )
    _, line = summary_and_line(pull, classify(pull, RepoConfig()), translator("en"))
    assert line == "Caches the decoded shards so the second epoch should start at once."


def test_a_body_that_only_points_at_issues_gives_no_summary() -> None:
    for body in ("fix #11910", "close #5", "resolves #7 and #8", "Fixes vuejs/core#12, #13",
                 "修复 #12", "See #5.", "close https://github.com/a/b/issues/3"):
        assert body_summary(body) is None, body
    assert body_summary("fix #11910\n\nThe transition hook now runs.") == \
        "The transition hook now runs."
    assert body_summary("Fix the crash in #12 when x is None.") == \
        "Fix the crash in #12 when x is None."


def test_a_symptom_in_another_form_of_its_word_is_said_in_chinese() -> None:
    from bot.engine.score import symptom
    for word, said in (("explodes", "爆炸"), ("crashed", "崩溃"), ("hanging", "卡死"),
                       ("leaking", "泄漏"), ("deadlocks", "死锁"), ("crash", "崩溃")):
        assert symptom(word, "zh") == said, word
    assert symptom("explodes", "en") == "explodes"
    assert symptom("wobbles", "zh") == "wobbles"  # no word for it: as written


def test_a_description_is_said_to_be_one_only_where_the_body_gave_it() -> None:
    pull = PullRequest(number=5, title="feat: sharded sync", url="u", state="merged",
                       body="Adds sharded weight sync so that large models load in parallel.",
                       additions=40, files=(FileChange(path="src/sync.py"),))
    summary, described = summarize(pull, classify(pull, RepoConfig()), translator("en"))
    assert described and "sharded weight sync" in summary


@pytest.mark.parametrize(("lang", "said", "not_said"), [
    ("en", "Type: new feature.", "Type: feat"),
    ("zh", "类型：新功能。", "PR 描述（原文）"),
])
def test_an_answer_about_a_pr_without_a_description_does_not_call_its_files_one(
        lang: Lang, said: str, not_said: str) -> None:
    pull = PullRequest(number=32286, title="ENH: implement descending sorts for StringDType",
                       url="https://github.com/numpy/numpy/pull/32286", state="merged",
                       additions=260, deletions=137,
                       files=(FileChange(path="numpy/_core/tests/test_stringdtype.py"),))
    answer = answer_pull(pull, repository="numpy/numpy", repo_config=RepoConfig(), lang=lang)
    text = render_reply(Reply(kind="pull", lang=lang, pull=answer, mode="summary"), "text")
    assert said in text and not_said not in text, text
    assert "numpy/_core/tests" in text  # what its files say, as such


@pytest.mark.parametrize(("lang", "said"), [("en", "Type: unclassified."),
                                             ("zh", "类型：未分类。")])
def test_a_pr_of_no_known_kind_is_called_unclassified(lang: Lang, said: str) -> None:
    pull = PullRequest(number=3739, title="Changed tempfile.NamedTemporaryFile mode to w",
                       url="https://github.com/pallets/click/pull/3739", state="merged",
                       files=(FileChange(path="src/click/_termui_impl.py"),))
    answer = answer_pull(pull, repository="pallets/click", repo_config=RepoConfig(), lang=lang)
    text = render_reply(Reply(kind="pull", lang=lang, pull=answer, mode="summary"), "text")
    assert said in text and "other" not in text, text


SQUASHED = ("* fix: record recovered panic errors\n\n* chore(deps): bump quic-go to v0.59.1\n\n"
            "* refactor(recovery): simplify panic error recording\n\n- Collapse the if/else\n\n"
            "---------\n\nCo-authored-by: A <a@example.com>")


def test_a_squash_list_of_commits_is_no_description_of_the_pr() -> None:
    pull = PullRequest(number=4698, title="fix(recovery): record recovered panics in c.Errors",
                       url="u", state="merged", body=SQUASHED, additions=20,
                       files=(FileChange(path="recovery.go"),))
    cls = classify(pull, RepoConfig())
    summary, line = summary_and_line(pull, cls, translator("en"))
    # Not the second commit's subject: the PR changes recovery.go only.
    assert "quic-go" not in summary + line and "recovered panics" in line
    assert summarize(pull, cls, translator("en"))[1] is False


def test_a_squash_lists_first_entry_in_prose_is_the_description() -> None:
    body = ("* Previously, Copy() only copied Keys and Params, leaving Errors and\n"
            "Accepted as nil even when set on the original context.\n\n"
            "* Replace assert.Equal with assert.Len to satisfy the linter\n")
    pull = PullRequest(number=4695, title="fix(context): Copy() copies Errors", url="u",
                       state="merged", body=body, files=(FileChange(path="context.go"),))
    summary, described = summarize(pull, classify(pull, RepoConfig()), translator("en"))
    assert described and "only copied Keys and Params" in summary
    assert "linter" not in summary


@pytest.mark.parametrize("body", [
    "* adds the cache\n* fixes the login loop\n* documents both",  # a plain list
    "Adds the cache.\n\n* one\n\n* two",  # prose first
])
def test_a_description_written_as_a_list_is_read_as_one(body: str) -> None:
    pull = PullRequest(number=1, title="feat: cache", url="u", state="merged", body=body,
                       files=(FileChange(path="cache.py"),))
    assert summarize(pull, classify(pull, RepoConfig()), translator("en"))[1] is True


def test_a_change_pointing_back_at_what_came_before_is_no_line_of_its_own() -> None:
    body = ("For server output, build_getter reused the identifier as the callee. The getter "
            "returned undefined instead of the derived value. Fix it by avoiding the "
            "double-transform.")
    assert change_line(body) is None
    assert change_line("Fixes the login loop by clearing the cookie. Fix it by retrying.") \
        == "Fixes the login loop by clearing the cookie."


@pytest.mark.parametrize(("text", "said"), [
    ("don't duplicate comments in attributes", "Don't duplicate comments in attributes"),
    ("fix the login loop", "Fix the login loop"),
    ("recv_buf is reused", "recv_buf is reused"),  # an identifier stays as written
    ("vLLM 0.22 support", "vLLM 0.22 support"),
])
def test_a_title_opens_in_capitals_unless_it_opens_with_a_name(text: str, said: str) -> None:
    assert sentence_case(text) == said


def test_a_first_commit_titled_as_the_pr_carries_its_description() -> None:
    body = ("* fix(rlhf): skip model reload during colocate vLLM init on FSDP2\n\n"
            "In the FSDP2 backend the model is still whole at init, so reloading it put "
            "the full model on one card and ran out of memory.\n\n"
            "* test: cover the reload flag\n\n* docs: note the flag")
    pull = PullRequest(number=9793, url="u", state="merged", body=body,
                       title="[Bugfix (rlhf)] skip model reload during colocate vLLM init "
                             "on FSDP2", files=(FileChange(path="swift/rlhf/grpo.py"),))
    summary, described = summarize(pull, classify(pull, RepoConfig()), translator("en"))
    assert described and "ran out of memory" in summary and "reload flag" not in summary
    other = msgspec.structs.replace(pull, title="Support OpenAI message processors")
    assert summarize(other, classify(other, RepoConfig()), translator("en"))[1] is False


def test_a_summary_from_the_files_names_where_the_code_changed_first() -> None:
    """ant-design #58932 fixed Select's style; its snapshots and demo are elsewhere."""
    snaps = "components/auto-complete/__tests__/__snapshots__"
    pull = PullRequest(number=58932, title="fix(Select): keep customize input aligned",
                       url="u", state="merged", additions=461, deletions=5, files=(
                           FileChange(path=f"{snaps}/demo-extend.test.ts.snap", additions=279),
                           FileChange(path=f"{snaps}/demo.test.tsx.snap", additions=101),
                           FileChange(path="components/auto-complete/demo/clear.md"),
                           FileChange(path="components/auto-complete/demo/clear.tsx"),
                           FileChange(path="components/select/style/index.ts", additions=4)))
    answer = answer_pull(pull, repository="ant-design/ant-design", repo_config=RepoConfig(),
                         lang="en")
    assert answer.summary == ("Changes 5 files in components/select/style and "
                              "components/auto-complete/demo (+461/-5 lines)")


def test_a_body_wrapped_as_git_wraps_it_is_read_as_its_sentences() -> None:
    """tokio #8325's commit body, wrapped at 72: a wrapped line is no sentence of its own
    ("Nothing needs. The global total order: …")."""
    body = ("Every atomic operation on Notify::state used SeqCst. Nothing needs\n"
            "the global total order: every lock-avoidance decision is made by an RMW,\n"
            "which always reads the latest value in that atomic's modification order.")
    pull = PullRequest(number=8325, title="sync: use acquire/release orderings in Notify",
                       url="u", state="merged", body=body,
                       files=(FileChange(path="tokio/src/sync/notify.rs"),))
    answer = answer_pull(pull, repository="tokio-rs/tokio", repo_config=RepoConfig(),
                         lang="en")
    assert "Nothing needs the global total order: every" in answer.summary, answer.summary
    assert "Nothing needs." not in answer.summary, answer.summary


def test_a_list_of_short_lines_without_stops_is_a_sentence_each() -> None:
    body = "Add the flag\nDocument it\nTest it"
    pull = PullRequest(number=1, title="feat: add a flag", url="u", state="merged",
                       body=body, files=(FileChange(path="src/flag.py"),))
    answer = answer_pull(pull, repository="o/r", repo_config=RepoConfig(), lang="en")
    assert answer.summary.startswith("Add the flag."), answer.summary


def test_long_lines_without_stops_that_open_in_capitals_stay_apart() -> None:
    """A list of long lines, each its own point, is not run into one sentence."""
    body = ("Add a retry around the registry lookup when the cache is cold at start\n"
            "Keep the listener alive across reconnects so no notification is lost\n"
            "Log the endpoint that failed so operators can see where it went wrong")
    pull = PullRequest(number=2, title="fix: registry lookups", url="u", state="merged",
                       body=body, files=(FileChange(path="registry/lookup.go"),))
    answer = answer_pull(pull, repository="o/r", repo_config=RepoConfig(), lang="en")
    assert answer.summary.startswith(
        "Add a retry around the registry lookup when the cache is cold at start."), \
        answer.summary
