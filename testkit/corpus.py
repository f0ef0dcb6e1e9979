"""The corpus of real repositories the engine was not tuned on (tests/corpus, see its
README), and what a reader checks in their digests, measured the same way by the
tests and by `python -m testkit.corpus` (which prints the figures).

Every check reads the rendered text a team reads (the chat text and the full report,
zh and en) or the Digest JSON, and decides from the titles and labels as written, with
rules of its own, not the engine's.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from typing import Any

from bot.config import RepoConfig
from bot.engine import build_digest
from bot.models import Digest, Lang, Snapshot
from bot.render import render_digest
from bot.snapshot import read_snapshot
from testkit import ROOT

CORPUS = ROOT / "tests" / "corpus"


@dataclass(frozen=True)
class Repository:
    """A corpus file: its name, the repository it holds, its weeks and conventions."""

    name: str
    repository: str
    weeks: tuple[str, ...]
    conventions: str
    chinese: bool = False


REPOSITORIES = (
    Repository("1Panel", "1Panel-dev/1Panel", ("2024-W41", "2024-W42"),
               "Chinese titles, `fix: …` without scopes", chinese=True),
    Repository("dataease", "dataease/dataease", ("2024-W41", "2024-W42"),
               "Chinese titles with Chinese scopes `fix(图表、仪表板): …`, merge commits",
               chinese=True),
    Repository("bk-ci", "TencentBlueKing/bk-ci", ("2026-W32", "2026-W33"),
               "Chinese titles, `bug:`/`pref:`/full-width colons, merge commits",
               chinese=True),
    Repository("Langchain-Chatchat", "chatchat-space/Langchain-Chatchat",
               ("2024-W23", "2024-W24"),
               "plain Chinese sentences, a branch sync (`Dev`), a quiet week", chinese=True),
    Repository("fastapi", "fastapi/fastapi", ("2026-W32", "2026-W33"),
               "gitmoji (🐛 ✨ ⬆ 📝 ♻ 🔥 🔒 👷), bot bumps, trailers"),
    Repository("lobe-ui", "lobehub/lobe-ui", ("2026-W32", "2026-W33"),
               "gitmoji with conventional scopes `✨ feat(image): …`, a small team"),
    Repository("brew", "Homebrew/brew", ("2026-W32", "2026-W33"),
               "merge commits, path scopes `cask/audit: …`, plain sentences, reverts, bumps"),
    Repository("uv", "astral-sh/uv", ("2026-W32", "2026-W33"),
               "plain sentences, long bodies with trailers and tables, a busy week"),
    Repository("jumpserver", "jumpserver/jumpserver", ("2026-W32", "2026-W33"),
               "conventional `perf:`/`fix:` in English, squash bodies of commit lists"),
    Repository("httpx", "encode/httpx", ("2025-W42", "2025-W50"),
               "a quiet repository: one to two PRs a week"),
    Repository("numpy", "numpy/numpy", ("2026-W32", "2026-W33"),
               "the NumPy style `ENH:`/`MAINT:`/`BLD:`/`TYP:`, `MAINT, TST:`, RST code, "
               "merge commits"),
    Repository("nacos", "alibaba/nacos", ("2025-W34", "2025-W35"),
               "`[ISSUE #N]: …` tags, titles of no convention, three PRs a week"),
    Repository("pydantic", "pydantic/pydantic", ("2026-W32", "2026-W33"),
               "plain sentences, unquoted reverts, a release, lock-file updates, squash lists"),
    Repository("lmdeploy", "InternLM/lmdeploy", ("2026-W32", "2026-W33"),
               "conventional titles, squash bodies listing many commits"),
    Repository("svelte", "sveltejs/svelte", ("2026-W32", "2026-W33"),
               "Changesets: a `.changeset/` note in every PR, `Version Packages`"),
    Repository("gin", "gin-gonic/gin", ("2026-W26", "2026-W33"),
               "conventional titles with scopes, squash lists of commits, a quiet repository"),
    Repository("hertzbeat", "apache/hertzbeat", ("2026-W32", "2026-W33"),
               "`[security]`/`maintenance:` tags, security hardening, squash lists"),
    Repository("seatunnel", "apache/seatunnel", ("2024-W41", "2024-W42"),
               "`[Improve][Connector-V2] …` bracket pairs, a busy week"),
    Repository("seata", "apache/incubator-seata", ("2024-W41", "2024-W42"),
               "`optimize:`/`bugfix:` types, a changelog every PR writes in"),
    Repository("ant-design", "ant-design/ant-design", ("2026-W32", "2026-W33"),
               "component scopes `fix(Select): …`, `site:`/`demo:`, Jest snapshots, bumps"),
    Repository("PaddleX", "PaddlePaddle/PaddleX", ("2024-W41", "2024-W42"),
               "`[Feat]`/`[Docs]` tags, English and Chinese docs, a fork's `Develop`"),
    Repository("click", "pallets/click", ("2026-W30", "2026-W33"),
               "plain sentences, merge commits, code at the top of `src/click`"),
    Repository("ollama", "ollama/ollama", ("2026-W32", "2026-W33"),
               "`area: description` titles, version bumps, a release squash list"),
    Repository("tokio", "tokio-rs/tokio", ("2026-W32", "2026-W33"),
               "`subsystem: description`, bodies wrapped at 72 columns"),
    Repository("dubbo-go", "apache/dubbo-go", ("2026-W32", "2026-W33"),
               "conventional with scopes, a `tools/` folder, titles made from branches"),
    Repository("echarts", "apache/echarts", ("2026-W21", "2026-W22"),
               "`fixRegression:`, `Merge 6.1.0 release to master`, a quiet repository"),
)
LANGS: tuple[Lang, ...] = ("zh", "en")


@cache
def snapshot(name: str) -> Snapshot:
    return read_snapshot(CORPUS / f"{name}.json")


@cache
def digest(name: str, week: str, lang: Lang) -> Digest:
    """The week's digest as a new user gets it: no config."""
    return build_digest(snapshot(name), week, repo_config=RepoConfig(), lang=lang)


@cache
def rendered(name: str, week: str, lang: Lang, fmt: str) -> str:
    return render_digest(digest(name, week, lang), fmt)  # type: ignore[arg-type]


def weeks() -> Iterator[tuple[Repository, str]]:
    for repo in REPOSITORIES:
        for week in repo.weeks:
            yield repo, week


def outside_the_list(report: str) -> str:
    """A full report but its list of every PR (each title as written)."""
    for heading in ("\n## 本周全部 PR", "\n## Every PR"):
        before, found, rest = report.partition(heading)
        if found:
            return before + (rest.split("\n---\n", 1)[1] if "\n---\n" in rest else "")
    return report


# --- item lines ------------------------------------------------------------------------

# A key PR's line ("• #12 …", "- **#12 …") and a theme's line ("  - …（#12）").
_KEY_LINE = re.compile(r"^\s*[-•]\s+(?:\*\*)?#(\d+)\s+(.*)$")
_THEME_LINE = re.compile(r"^\s+-\s+(.*)[（(]#(\d+)[）)]$")


def item_lines(text: str) -> list[tuple[int, str]]:
    """(PR number, what the line says of it) for every line that names a PR by its
    title: the key PRs and the themes' lines."""
    found: list[tuple[int, str]] = []
    for line in text.splitlines():
        if (key := _KEY_LINE.match(line)) is not None:
            found.append((int(key.group(1)), key.group(2).replace("**", "")))
        elif (theme := _THEME_LINE.match(line)) is not None:
            found.append((int(theme.group(2)), theme.group(1)))
    return found


def zh_item_lines(repo: Repository, week: str) -> list[tuple[int, str]]:
    """The zh chat text's and full report's item lines of a week."""
    return [*item_lines(rendered(repo.name, week, "zh", "text")),
            *item_lines(outside_the_list(rendered(repo.name, week, "zh", "markdown")))]


HAN = re.compile(r"[\u3400-\u9fff]")
# What a title says once its convention is taken off: a type prefix (conventional, with
# a scope), bracket tags, gitmoji, issue numbers at its end.
_PREFIX = re.compile(
    r"^(?:\s*(?:[\U0001f000-\U0001faff\u2190-\u2bff]\ufe0f?|:[a-z_]+:)\s*)*"
    r"(?:\s*[\[【][^\]】]*[\]】])*\s*(?:[A-Za-z]+\s*(?:[(（][^)）]*[)）])?!?\s*[:：;]\s*)?"
    r"(?:\s*[\[【][^\]】]*[\]】])*")
_ISSUES = re.compile(r"(?:[\s,，]*(?:issues?\s*)?#\d+)+\s*$", re.I)


def said_text(title: str) -> str:
    """A title's own words, its convention taken off."""
    return _ISSUES.sub("", _PREFIX.sub("", title, count=1)).strip()


def _norm(text: str) -> str:
    """Text compared as a reader sees it: no spaces, no Markdown escapes, parentheses
    of either width alike."""
    return re.sub(r"\s+|\\", "", text).translate(str.maketrans("（）：", "():"))


def chinese_titles_kept(repo: Repository, week: str) -> tuple[int, int]:
    """(kept, lines): the zh item lines of PRs whose title is Chinese, and how many of
    them hold the title's own words whole."""
    titles = {p.number: said_text(p.title) for p in snapshot(repo.name).pulls}
    lines = [(n, line) for n, line in zh_item_lines(repo, week)
             if HAN.search(titles.get(n, ""))]
    kept = sum(1 for n, line in lines if _norm(titles[n]) in _norm(line))
    return kept, len(lines)


TYPE_LABELS = ("新功能", "修复", "性能优化", "重构", "文档", "测试", "持续集成", "构建",
               "维护", "代码风格", "回滚", "改动")
_LABEL_LINE = re.compile("^(?:【[^】]*】)?(?:" + "|".join(TYPE_LABELS)
                         + r")(?:：(?P<rest>[^，；：。]*))?(?:[，；：。]|$)")


def says_only_type_and_names(line: str, title: str) -> bool:
    """Whether a zh line is its type and a name or two ("改动：Foo、Git", "修复") for a
    title that says more (three words or more of its own)."""
    found = _LABEL_LINE.match(line.strip())
    if found is None or len(said_text(title).split()) < 3 or HAN.search(said_text(title)):
        return False
    rest = (found.group("rest") or "").strip()
    return not HAN.search(rest) and len([w for w in re.split(r"[、\s]+", rest) if w]) <= 2


def bare_lines(repo: Repository, week: str) -> tuple[int, int]:
    """(bare, lines): zh item lines that are a type label and a name or two."""
    titles = {p.number: p.title for p in snapshot(repo.name).pulls}
    lines = zh_item_lines(repo, week)
    return sum(1 for n, line in lines if says_only_type_and_names(line, titles.get(n, ""))), \
        len(lines)


# --- what never reaches a reader --------------------------------------------------------

_TRAILER = re.compile(r"\b(?:Signed-off-by|Co-authored-by|Reviewed-by|Change-Id)\s*:", re.I)
_TABLE_ROW = re.compile(r"^\s*\|.*\|\s*$|\|\s*:?-{3,}:?\s*\|", re.M)


def trailers_and_tables(text: str) -> list[str]:
    """The commit trailers and table rows a rendered digest holds."""
    return [m.group(0) for m in _TRAILER.finditer(text)] + [
        m.group(0) for m in _TABLE_ROW.finditer(text)]


# What calls a PR a security fix, as its maintainers write it: a [Security] tag, a
# security type or scope, the lock gitmoji, a CVE or GHSA id, a security label.
_CALLED_SECURITY = re.compile(
    r"[\[(]\s*(?:security|sec|vuln|cve)\s*[\])]|^\s*(?:security|sec)\s*[(:]|🔒|:lock:|"
    r"\bCVE-\d{4}-\d{4,}|\bGHSA-", re.I)


def called_security(title: str, labels: tuple[str, ...]) -> bool:
    return bool(_CALLED_SECURITY.search(title)) or any(
        "security" in label.lower() for label in labels)


def unfounded_security_fixes(repo: Repository, week: str) -> list[int]:
    """PRs the digest calls security fixes that no title or label calls one."""
    pulls = {p.number: p for p in snapshot(repo.name).pulls}
    return [entry.number for entry in digest(repo.name, week, "en").pulls
            if entry.security and not called_security(pulls[entry.number].title,
                                                      pulls[entry.number].labels)]


_SYNC = re.compile(r"^\s*(?:merge\s+branch\b.*|(?:dev|develop|master|main)(?:[\s._-]*v?\d+)?"
                   r"(?:\s*(?:->|→|to|into)\s*(?:dev|develop|master|main))?)\s*$", re.I)


def branch_syncs_as_key(repo: Repository, week: str) -> list[int]:
    """Key PRs whose title only moves one branch into another."""
    return [k.number for k in digest(repo.name, week, "en").key_pulls if _SYNC.match(k.title)]


# --- the figures --------------------------------------------------------------------------


def figures() -> dict[str, Any]:
    """The Must-show figures over the whole corpus."""
    kept = total = bare = lines = 0
    leaks: list[str] = []
    unfounded: list[str] = []
    syncs: list[str] = []
    for repo, week in weeks():
        k, n = chinese_titles_kept(repo, week)
        kept, total = kept + k, total + n
        b, m = bare_lines(repo, week)
        bare, lines = bare + b, lines + m
        for lang in LANGS:
            for fmt in ("text", "markdown"):
                leaks += [f"{repo.name} {week} {lang} {fmt}: {x}" for x in trailers_and_tables(
                    outside_the_list(rendered(repo.name, week, lang, fmt)))]
        unfounded += [f"{repo.name}#{n}" for n in unfounded_security_fixes(repo, week)]
        syncs += [f"{repo.name}#{n}" for n in branch_syncs_as_key(repo, week)]
    return {"chinese_titles_kept": [kept, total], "bare_lines": [bare, lines],
            "trailers_and_tables": leaks, "unfounded_security_fixes": unfounded,
            "branch_syncs_as_key": syncs}


if __name__ == "__main__":
    json.dump(figures(), sys.stdout, ensure_ascii=False, indent=1)
    sys.stdout.write("\n")
