"""Every PR number, file path and figure a digest shows exists in its input."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from bot.config import RepoConfig, TopicRule, load_config
from bot.engine import build_digest
from bot.models import Lang, Snapshot
from bot.render import render_digest
from bot.snapshot import read_snapshot
from testkit import EXAMPLES

FORMATS = ("markdown", "text", "json")
LANGS: tuple[Lang, ...] = ("zh", "en")
PR_REF = re.compile(r"#(\d+)")
PATH = re.compile(r"(?<![\w/.-])((?:[\w.-]+/)+[\w.-]+\.[A-Za-z0-9]+)")
FIGURE = re.compile(
    r"~?\d+(?:\.\d+)?(?:\s*[-–~]\s*\d+(?:\.\d+)?)?\s*(?:[x×](?![A-Za-z0-9])|[KMGT]i?B)"
)
CJK = re.compile(r"[\u3000-\u303f\u4e00-\u9fff\uff00-\uffef]")


def _corpus(snapshot: Snapshot) -> str:
    """All text the snapshot holds, to look claims up in."""
    parts: list[str] = []
    for p in snapshot.pulls:
        parts += [p.title, p.body or "", p.url]
        parts += [f.path for f in p.files]
        parts += [c.body or "" for c in p.comments or ()]
        parts += [r.body or "" for r in p.reviews or ()]
        for th in p.review_threads or ():
            parts += [th.path or ""] + [c.body or "" for c in th.comments] + [
                c.url or "" for c in th.comments]
    return "\n".join(parts)


def _check(output: str, snapshot: Snapshot, fmt: str, lang: Lang) -> None:
    numbers = {p.number for p in snapshot.pulls}
    corpus = _corpus(snapshot)
    plain = output.replace("\\", "")
    for ref in PR_REF.findall(plain):
        assert int(ref) in numbers or f"#{ref}" in corpus or f"/pull/{ref}" in corpus, (
            f"#{ref} not in the input")
    for path in PATH.findall(plain):
        if path.startswith(("github.com/", "www.")) or "github.com" in path:
            continue
        assert path in corpus, f"path {path!r} not in the input"
    for figure in FIGURE.findall(plain):
        assert figure.strip() in corpus, f"figure {figure!r} not in the input"
    if lang == "en" and fmt != "json":
        leftover = [line for line in plain.splitlines()
                    if CJK.search(line) and not CJK.search(corpus)]
        assert not leftover, leftover


def _example() -> tuple[Snapshot, RepoConfig]:
    config = load_config(EXAMPLES / "prdigest.toml")
    return read_snapshot(EXAMPLES / "snapshot.json"), config.repo("acme/lumen")


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("lang", LANGS)
def test_example_digest_is_traceable(fmt: str, lang: Lang) -> None:
    snapshot, repo = _example()
    digest = build_digest(snapshot, "2026-W29", repo_config=repo, lang=lang, previous=snapshot)
    output = render_digest(digest, fmt)  # type: ignore[arg-type]
    _check(output, snapshot, fmt, lang)
    assert "#1201" in output


@pytest.mark.realdata
@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize(("name", "repo", "week"), [
    ("verl-2026-07.json", "verl-project/verl", "2026-W29"),
    ("verl-2026-07.json", "verl-project/verl", "2026-W30"),
    ("vllm-2026-W29.json", "vllm-project/vllm", "2026-W29"),
])
def test_real_digests_are_traceable(shared_data: Path, name: str, repo: str, week: str,
                                    fmt: str, lang: Lang) -> None:
    snapshot = read_snapshot(shared_data / name)
    config = RepoConfig(topics={"npu": TopicRule(keywords=("npu", "ascend"))})
    digest = build_digest(snapshot, week, repo_config=config, lang=lang, previous=snapshot)
    assert digest.counts.total > 0
    _check(render_digest(digest, fmt), snapshot, fmt, lang)  # type: ignore[arg-type]


def test_english_digest_has_no_chinese_words() -> None:
    snapshot, repo = _example()
    output = render_digest(build_digest(snapshot, "2026-W29", repo_config=repo, lang="en"),
                           "markdown")
    assert not CJK.search(output)


def test_chinese_digest_uses_the_seed_headings() -> None:
    snapshot, repo = _example()
    output = render_digest(build_digest(snapshot, "2026-W29", repo_config=repo, lang="zh"),
                           "markdown")
    headings = [line[3:] for line in output.splitlines() if line.startswith("## ")]
    # the seed's sections, then who did the work and the full report's list of every PR
    assert headings == ["执行摘要", "本周重点变化", "模块与主题趋势", "风险观察", "重点 PR 速览",
                        "后续建议", "参与者", "本周全部 PR（按主题）"]
    assert output.startswith("# acme/lumen 2026 年第 29 周周报（07-13 至 07-19）")
    assert "- 来源 PR：16" in output and "- 重点 PR：11" in output
