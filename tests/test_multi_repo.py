"""A channel of several repositories: config, one combined digest (summed counts, each
repository's own sections under its name, references `org/a#12` in the summary), every
format, the CLI and chat."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import msgspec
import pytest
from typer.testing import CliRunner

from adapters.feishu.render import card_content, digest_cards
from adapters.slack.render import render_digest_messages as slack_messages
from adapters.telegram.render import render_digest_messages as telegram_messages
from bot.chat.grammar import parse_command
from bot.chat.handler import CommandHandler
from bot.cli import app
from bot.config import parse_config
from bot.digests import Digests
from bot.engine import build_digest
from bot.errors import ConfigError, SourceError
from bot.models import Digest, Lang, Reply
from bot.render import render_digest, render_reply
from bot.snapshot import encode_snapshot
from bot.source import SnapshotSource
from testkit.multi_repo import (
    LUMEN,
    PRISM,
    PRISM_ONLY,
    SHARED_NUMBERS,
    WEEK,
    prism_snapshot,
    two_repo_config,
)
from testkit.server_support import example_snapshot, snapshot_clock

CONFIG = two_repo_config()
CHANNEL = CONFIG.channels[0]


def _source() -> SnapshotSource:
    return SnapshotSource(example_snapshot(), prism_snapshot())


async def _combined(lang: Lang = "en", *, link: bool = False) -> Digest:
    return await Digests(CONFIG, _source()).build_many((LUMEN, PRISM), WEEK, lang, link=link)


def _single(repo: str, lang: Lang = "en") -> Digest:
    snapshot = example_snapshot() if repo == LUMEN else prism_snapshot()
    return build_digest(snapshot, WEEK, repo_config=CONFIG.repo(repo), lang=lang)


# --- config -----------------------------------------------------------------------------


def _channel(**fields: Any) -> dict[str, Any]:
    return {"repos": {LUMEN: {}, PRISM: {}},
            "channels": [{"platform": "slack", "id": "C1", **fields}]}


def test_a_channel_lists_several_repositories() -> None:
    config = parse_config(_channel(repos=[LUMEN, PRISM]))
    assert config.channels[0].repositories == (LUMEN, PRISM)
    assert config.channels[0].follows("ACME/Prism")
    assert parse_config(_channel(repo=LUMEN)).channels[0].repositories == (LUMEN,)


@pytest.mark.parametrize(("fields", "message"), [
    ({"repo": LUMEN, "repos": [LUMEN, PRISM]}, "channels[0].repos: give repo or repos, not both"),
    ({}, "channels[0].repo: missing"),
    ({"repos": [LUMEN, "acme/other"]}, "channels[0].repos[1]: 'acme/other' is not under [repos]"),
    ({"repos": [LUMEN, "nonsense"]}, "channels[0].repos[1]: repository must be written owner/name"),
    ({"repos": [LUMEN, LUMEN]}, "channels[0].repos[1]: 'acme/lumen' is listed twice"),
    ({"repos": [LUMEN, "ACME/Lumen"]}, "channels[0].repos[1]: 'ACME/Lumen' is listed twice"),
])
def test_a_bad_list_of_repositories_is_a_config_error_naming_its_field(
        fields: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError, match=re.escape(message)):
        parse_config(_channel(**fields))


# --- the combined digest ------------------------------------------------------------------


async def test_the_combined_counts_are_the_sums_of_each_repositorys() -> None:
    digest = await _combined()
    lumen, prism = _single(LUMEN), _single(PRISM)
    for field in ("total", "key", "merged", "closed", "opened"):
        assert getattr(digest.counts, field) == (getattr(lumen.counts, field)
                                                 + getattr(prism.counts, field))
    assert [(r.name, r.counts) for r in digest.repositories] == [
        (LUMEN, lumen.counts), (PRISM, prism.counts)]
    npu = {t.name: t.count for t in digest.topics}["npu"]
    assert npu == sum({t.name: t.count for t in d.topics}.get("npu", 0) for d in (lumen, prism))
    assert sum(t.count for t in digest.types) == digest.counts.total


async def test_each_repository_keeps_its_own_sections() -> None:
    digest = await _combined()
    lumen, prism = digest.parts
    assert (lumen.repository, prism.repository) == (LUMEN, PRISM)
    assert {k.number for k in lumen.key_pulls} == {k.number for k in _single(LUMEN).key_pulls}
    assert set(PRISM_ONLY.values()) <= {p.number for p in prism.pulls}
    assert all(p.url.startswith(f"https://github.com/{PRISM}/") for p in prism.pulls)
    assert all(p.url.startswith(f"https://github.com/{LUMEN}/") for p in lumen.pulls)


async def test_a_single_repository_digest_lists_itself_once() -> None:
    digest = await Digests(CONFIG, _source()).build_many((LUMEN,), WEEK, "en")
    assert not digest.parts
    assert [r.name for r in digest.repositories] == [LUMEN]
    data = json.loads(render_digest(digest, "json"))
    assert data["repositories"] == [{"name": LUMEN, "counts": data["counts"]}]


async def test_suggestions_name_their_repository() -> None:
    digest = await _combined()
    assert digest.suggestions
    assert all(re.search(r"acme/(lumen|prism)#\d+", s) or "#" not in s
               for s in digest.suggestions)
    assert not any(re.search(r"(?<![\w/])#\d", s) for s in digest.suggestions)


async def test_a_snapshot_file_never_stands_in_for_another_repository() -> None:
    digests = Digests(CONFIG, SnapshotSource(example_snapshot()))
    with pytest.raises(SourceError, match="no snapshot file holds acme/prism"):
        await digests.build_many((LUMEN, PRISM), WEEK, "en")


# --- every format -----------------------------------------------------------------------

_BARE = re.compile(r"(?<![\w/#&])#\d{4}\b")
_REF = re.compile(r"(?<![\w&])([\w/.-]*)#(\d{4})\b")


def _under_headings(text: str, fmt: str) -> dict[str, list[str]]:
    """The lines drawn under each repository's name (`### acme/lumen` in Markdown, the
    name alone on its line in text), up to the next heading."""
    found: dict[str, list[str]] = {LUMEN: [], PRISM: []}
    sections = {"Key changes", "Module and topic trends", "Risk observations",
                "Key PRs at a glance", "Follow-up suggestions", "本周重点变化", "模块与主题趋势",
                "风险观察", "重点 PR 速览", "后续建议"}
    current = None
    for line in text.splitlines():
        name = line[4:] if fmt == "markdown" and line.startswith("### ") else line
        if name in found:
            current = name
        elif (line.startswith("#") and fmt == "markdown") or line in sections:
            current = None
        elif current:
            found[current].append(line)
    return found


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("fmt", ["markdown", "text"])
async def test_references_under_a_repositorys_name_go_without_it(fmt: str, lang: Lang
                                                                 ) -> None:
    """Each repository's part is drawn under its name, so `#1201` there needs no
    `acme/lumen#` (verl's own heading repeated `verl-project/verl#` 21 times); the
    summary, which speaks of both, writes each reference with its repository. Only
    prism has #2001 and #2002, only lumen #1207 to #1216 (tests/multi_repo_support)."""
    text = render_digest(await _combined(lang), fmt)  # type: ignore[arg-type]
    own = {LUMEN: set(range(1201, 1217)), PRISM: set(SHARED_NUMBERS) | {2001, 2002}}
    parts = _under_headings(text, fmt)
    for repository, lines in parts.items():
        refs = _REF.findall("\n".join(lines))
        assert refs, repository
        assert {prefix for prefix, _ in refs} <= {"", "PR"}, repository  # no `acme/x#`
        assert {int(number) for _, number in refs} <= own[repository]
    assert {2001, 2002} & {int(n) for _, n in _REF.findall("\n".join(parts[PRISM]))}
    heading = "### " if fmt == "markdown" else ""
    summary, rest = text.split(f"\n{heading}{LUMEN}\n", 1)
    assert not _BARE.findall(summary)
    assert f"{LUMEN}#1201" in summary
    assert rest.index(f"\n{heading}{PRISM}\n") < rest.index(f"\n{heading}{LUMEN}\n")


async def test_markdown_header_names_each_repository_with_its_count() -> None:
    digest = await _combined()
    text = render_digest(digest, "markdown")
    first = text.splitlines()[0]
    assert first.startswith(f"# {LUMEN} and {PRISM} weekly report")
    lumen, prism = (r.counts.total for r in digest.repositories)
    assert (f"- Repositories: `{LUMEN}` ({lumen} PRs), `{PRISM}` ({prism} PRs)") in text
    assert f"By repository: {LUMEN} ({lumen} PRs) and {PRISM} ({prism} PRs)." in text
    zh = render_digest(await _combined("zh"), "markdown")
    assert f"- 仓库：`{LUMEN}`（{lumen} 个 PR）、`{PRISM}`（{prism} 个 PR）" in zh


async def test_notes_on_the_data_count_every_repositorys_prs_once() -> None:
    digest = await _combined()
    counted = re.compile(r"The resolution of (\d+) review threads? (is|are) not recorded\.")

    def unknown(notes: tuple[str, ...]) -> int:
        return sum(int(m[1]) for n in notes if (m := counted.fullmatch(n)))

    alone = unknown(_single(LUMEN).notes) + unknown(_single(PRISM).notes)
    assert alone and unknown(digest.notes) == alone
    assert sum(1 for n in digest.notes if counted.fullmatch(n)) == 1


async def test_a_repositorys_own_note_names_it() -> None:
    config = parse_config({
        "repos": {LUMEN: {}, PRISM: {"exclude": {"labels": ["NPU"]}}},
        "channels": [{"platform": "slack", "id": "C1", "repos": [LUMEN, PRISM]}]})
    prism = prism_snapshot()
    labelled = msgspec.structs.replace(prism, pulls=tuple(
        msgspec.structs.replace(p, labels=("NPU",)) if p.number == 2002 else p
        for p in prism.pulls))
    digest = await Digests(config, SnapshotSource(example_snapshot(), labelled)).build_many(
        (LUMEN, PRISM), WEEK, "en")
    assert (f"{PRISM}: Left out by the exclude settings: 1 PR with an excluded label."
            in digest.notes)
    assert 2002 not in {p.number for p in digest.parts[1].pulls}


async def test_single_repository_markdown_is_unchanged_by_the_combined_path() -> None:
    one = await Digests(CONFIG, _source()).build_many((LUMEN,), WEEK, "en")
    text = render_digest(one, "markdown")
    assert "#1201" in text and f"{LUMEN}#" not in text and "Repositories" not in text


async def test_slack_blocks_link_references_and_one_report_button_each() -> None:
    """The summary links `acme/lumen#1201`; under prism's name its own #2001 or #2002
    goes without the repository, its button too."""
    digest = await _combined(link=True)
    messages = slack_messages(digest)
    dump = json.dumps([m.as_post() for m in messages])
    assert f"|{LUMEN}#1201>" in dump
    assert "/acme/prism/pull/2001|#2001>" in dump or "/acme/prism/pull/2002|#2002>" in dump
    assert f"Open {PRISM}#" not in dump and "Open #" in dump
    buttons = [e for m in messages for b in m.blocks if b["type"] == "actions"
               for e in b["elements"]]
    assert [b["text"]["text"] for b in buttons if "url" in b] == [
        f"Full report ({LUMEN})", f"Full report ({PRISM})"]
    action_ids = [e["action_id"] for m in messages for b in m.blocks
                  for e in ([b["accessory"]] if "accessory" in b else b.get("elements", []))
                  if isinstance(e, dict) and "action_id" in e]
    assert len(action_ids) == len(set(action_ids))


async def test_telegram_messages_and_buttons_name_the_repository() -> None:
    digest = await _combined("zh", link=True)
    messages = telegram_messages(digest)
    text = "\n".join(m.text for m in messages)
    assert f">{LUMEN}#1201</a>" in text  # the summary
    assert re.search(r"prism/pull/200[12]\">#200[12]</a>", text)  # under prism's name
    labels = [b.label for m in messages for row in m.buttons for b in row]
    assert any(label.startswith(f"{PRISM}#") for label in labels)
    assert f"原文链接（{PRISM}）" in labels


async def test_feishu_cards_name_the_repository() -> None:
    digest = await _combined("zh", link=True)
    cards = digest_cards(digest)
    content = "".join(card_content(card) for card in cards)
    assert f"[{LUMEN}#1201]" in content  # the summary
    assert re.search(r"\[#200[12]\]\(https://github.com/acme/prism/", content)
    assert f"{LUMEN}（" in content  # the repository fact with its count


async def test_the_html_report_draws_each_repository_under_its_name() -> None:
    from bot.render.html import PageLinks, render_report_page

    page = render_report_page(await _combined(), PageLinks())
    assert f"<h3>{LUMEN}</h3>" in page and f"<h3>{PRISM}</h3>" in page
    assert re.search(r"prism/pull/2001\">#2001</a>", page)


# --- the CLI ----------------------------------------------------------------------------


def _files(tmp_path: Path) -> tuple[str, str, str]:
    lumen, prism = tmp_path / "lumen.json", tmp_path / "prism.json"
    lumen.write_bytes(encode_snapshot(example_snapshot()))
    prism.write_bytes(encode_snapshot(prism_snapshot()))
    config = tmp_path / "prdigest.toml"
    config.write_text(f'[repos."{LUMEN}"]\n[repos."{PRISM}"]\n')
    return str(lumen), str(prism), str(config)


def _run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(app, list(args))
    return result.exit_code, result.stdout, result.stderr


def test_the_cli_digests_several_repositories_whatever_the_files_order(tmp_path: Path) -> None:
    lumen, prism, config = _files(tmp_path)
    code, out, err = _run("digest", LUMEN, PRISM, "--week", WEEK, "--snapshot", prism,
                          "--snapshot", lumen, "--config", config, "--format", "json")
    assert code == 0, err
    data = json.loads(out)
    assert [r["name"] for r in data["repositories"]] == [LUMEN, PRISM]
    assert data["counts"]["total"] == sum(r["counts"]["total"] for r in data["repositories"])


@pytest.mark.parametrize(("which", "message"), [
    ("one-file", "give one --snapshot per repository: 2 repositories, 1 files"),
    ("same-file", "holds acme/lumen, as another --snapshot does"),
])
def test_the_cli_says_which_snapshot_is_missing(tmp_path: Path, which: str, message: str
                                               ) -> None:
    lumen, _, config = _files(tmp_path)
    files = ["--snapshot", lumen] + (["--snapshot", lumen] if which == "same-file" else [])
    code, _, err = _run("digest", LUMEN, PRISM, "--week", WEEK, *files, "--config", config)
    assert code == 2
    assert message in err and "Traceback" not in err and len(err.strip().splitlines()) == 1


# --- chat -------------------------------------------------------------------------------


async def _ask(text: str, lang: Lang = "en") -> Reply:
    handler = CommandHandler(Digests(CONFIG, _source(), clock=snapshot_clock()))
    channel = msgspec.structs.replace(CHANNEL, lang=lang)
    return await handler.handle(parse_command(text), channel=channel, user="U1")


async def test_a_bare_number_only_one_repository_has_is_answered() -> None:
    reply = await _ask("summary #2001")
    assert reply.kind == "pull" and reply.pull is not None
    assert (reply.pull.repository, reply.pull.number) == (PRISM, 2001)


async def test_a_full_reference_picks_its_repository() -> None:
    reply = await _ask(f"summary {PRISM}#1201")
    assert reply.pull is not None and reply.pull.repository == PRISM
    assert reply.pull.title.endswith("(prism)")


@pytest.mark.parametrize(("lang", "words"), [
    ("en", "say which one"), ("zh", "请写明是哪一个")])
async def test_a_bare_number_both_repositories_have_asks_which(lang: Lang, words: str) -> None:
    reply = await _ask("risks #1201" if lang == "en" else "#1201 有什么风险", lang)
    assert reply.kind == "error" and reply.error == "pull-ambiguous"
    text = render_reply(reply, "text")
    assert words in text and f"{LUMEN}#1201" in text and f"{PRISM}#1201" in text


async def test_a_repository_the_channel_does_not_follow_is_refused() -> None:
    reply = await _ask("risks someone/else#1201")
    assert reply.error == "repo-not-allowed"
    assert dict(reply.params)["allowed"] == f"{LUMEN}, {PRISM}"


async def test_the_digest_command_gives_the_combined_digest() -> None:
    reply = await _ask(f"digest {WEEK}")
    assert reply.digest is not None
    assert [r.name for r in reply.digest.repositories] == [LUMEN, PRISM]


@pytest.mark.parametrize(("text", "written"), [
    ("Follow up on #12: x.", "Follow up on acme/a#12: x."),
    ("跟进 PR#12。", "跟进 acme/a#12。"),
    ("确认#12在", "确认acme/a#12在"),
    ("see acme/b#12 and path/#3 and a#4", "see acme/b#12 and path/#3 and a#4"),
])
def test_references_in_combined_text_name_their_repository(text: str, written: str) -> None:
    from bot.engine.combine import qualify

    assert qualify(text, "acme/a") == written


async def test_an_answer_in_a_chat_of_several_names_the_repository() -> None:
    reply = await _ask(f"summary {PRISM}#1201")
    assert render_reply(reply, "text").startswith(f"{PRISM}#1201 ")
    single = two_repo_config({"platform": "slack", "id": "C2", "repo": PRISM})
    handler = CommandHandler(Digests(single, _source(), clock=snapshot_clock()))
    alone = await handler.handle(parse_command("summary #1201"), channel=single.channels[0],
                                 user="U1")
    assert render_reply(alone, "text").startswith("#1201 ")


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_notice_in_a_chat_of_several_names_the_repository(lang: Lang) -> None:
    from adapters.slack.render import render_reply_messages as slack_reply
    from adapters.telegram.render import render_reply_messages as telegram_reply

    answer = Digests(CONFIG, _source()).answer_for(prism_snapshot().pulls[0], PRISM, lang)
    reply = Reply(kind="pull", lang=lang, mode="merged", pull=answer, topics=("npu",),
                  params=(("author", "a"), *CHANNEL.pull_scope(PRISM)))
    merged = "Merged: " if lang == "en" else "已合并："
    assert f"{merged}{PRISM}#1201 " in render_reply(reply, "text")
    assert f"{merged}{PRISM}#1201 " in telegram_reply(reply)[0].text
    assert f"{merged}{PRISM}#1201 " in slack_reply(reply)[0].text
    plain = msgspec.structs.replace(reply, params=(("author", "a"),))
    assert f"{merged}#1201 " in render_reply(plain, "text")


async def test_combined_slack_messages_pass_the_block_kit_checks() -> None:
    from testkit.slack_checks import assert_valid

    for lang in ("en", "zh"):
        for message in slack_messages(await _combined(lang, link=True)):  # type: ignore[arg-type]
            assert_valid(message)


async def test_a_narrated_combined_digest_words_each_repository_and_keeps_the_counts() -> None:
    from testkit.fakes.openai import FakeOpenAI
    from testkit.narration.week import every_format

    with FakeOpenAI(stall_seconds=5) as fake:
        config = msgspec.structs.replace(CONFIG, llm=parse_config({"llm": {
            "base_url": fake.base_url, "model": "fake-model", "timeout_s": 2,
            "budget_s": 20}}).llm)
        from bot.narrate import MemoryNarrations, narrator_for

        narrator = narrator_for(config, MemoryNarrations())
        assert narrator is not None
        try:
            told = await Digests(config, _source(), narrator=narrator).build_many(
                (LUMEN, PRISM), WEEK, "zh")
        finally:
            await narrator.close()
    plain = await _combined("zh")
    assert told.counts == plain.counts and told.repositories == plain.repositories
    assert all(part.narration is not None and part.narration.sections_narrated
               for part in told.parts)
    text = every_format(told)
    assert f"{PRISM}#" in text and f"{LUMEN}#" in text


async def test_each_repositorys_suggestions_stay_under_its_name() -> None:
    digest = await _combined()
    text = render_digest(digest, "markdown")
    section = text.split("## Follow-up suggestions", 1)[1].split("\n## ", 1)[0]
    lumen, prism = section.split(f"### {PRISM}")
    assert f"### {LUMEN}" in lumen
    assert all(f"{PRISM}#" not in line for line in lumen.splitlines())
    assert all(f"{LUMEN}#" not in line for line in prism.splitlines())
    assert digest.parts[0].suggestions and digest.parts[1].suggestions


def test_a_dry_run_post_to_a_channel_of_several_sends_their_one_digest(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("REDIS_URL", raising=False)
    lumen, prism, _ = _files(tmp_path)
    config = tmp_path / "channel.toml"
    config.write_text(f'[repos."{LUMEN}"]\n[repos."{PRISM}"]\n[[channels]]\nplatform = '
                      f'"telegram"\nid = "-100"\nrepos = ["{LUMEN}", "{PRISM}"]\nlang = "en"\n')
    args = ["post", PRISM, "--week", WEEK, "--channel", "telegram:-100", "--config",
            str(config), "--dry-run"]
    code, out, err = _run(*args, "--snapshot", lumen, "--snapshot", prism)
    assert code == 0, err
    assert f"of {LUMEN}, {PRISM} to telegram:-100" in err
    assert f"{LUMEN} and {PRISM} weekly report" in out and f"{PRISM}#" in out
    code, _, err = _run(*args, "--snapshot", lumen)
    assert code == 2 and "give one --snapshot per repository" in err
