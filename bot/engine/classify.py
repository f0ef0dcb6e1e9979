"""What a PR is about: its change type, modules and topics, from title, labels and files.

The title's conventions are read by `bot.engine.conventions` (conventional prefixes with
scopes in any script, bracket tags, gitmoji, merges, reverts, branch syncs, dependency
bumps); labels, the title's wording and the files touched fill in what it leaves out.
"""

from __future__ import annotations

import re
from fnmatch import fnmatchcase
from functools import lru_cache

import msgspec

from bot.config import RepoConfig, TopicRule
from bot.engine.areas import is_release_note, is_test_file, lock_files_only, where_changed
from bot.engine.conventions import (
    Title,
    canonical_type,
    normalise_module,
    type_word,
)
from bot.engine.conventions import parse_title as parse_title
from bot.engine.exclude import is_bot
from bot.engine.text import clean_body
from bot.models import PullRequest

_VERB_TYPES = (
    # What is added is what it is: `Introduce micro-optimizations for …` is performance.
    (re.compile(r"^(add|adds|introduce|implement|apply)\s+(?:\S+\s+){0,2}?"
                r"(?:micro-?optimi[sz]ations?|optimi[sz]ations)\b", re.I), "perf"),
    (re.compile(r"^(fix|fixes|fixed|correct|repair|resolve|handle|prevent|avoid)\b", re.I),
     "fix"),
    # `Improve …` is an improvement, as the `improvement:` prefix is.
    (re.compile(r"^(add|adds|added|support|implement|introduce|enable|expose|allow|"
                r"improve|improves|enhance)\b", re.I), "feat"),
    (re.compile(r"^(optimi[sz]e|speed up|accelerate|faster|reduce)\b", re.I), "perf"),
    (re.compile(r"^(refactor|remove|clean ?up|simplify|rename|move|split|migrate)\b", re.I),
     "refactor"),
    (re.compile(r"^(update|bump|upgrade|pin|sync)\b", re.I), "chore"),
    (re.compile(r"^revert\b", re.I), "revert"),
    # A Chinese title's opening verb: 修复/解决 a fix, 新增/增加/支持 a feature, 优化 a
    # performance change, 重构 a refactor.
    (re.compile(r"^(修复|解决|修正)"), "fix"),
    (re.compile(r"^(新增|增加|添加|支持|实现|引入)"), "feat"),
    (re.compile(r"^(优化|提升|加速)"), "perf"),
    (re.compile(r"^(重构|移除|删除|清理)"), "refactor"),
)
_DOC_FILE = re.compile(r"(^|/)(docs?/|README|CHANGELOG)|\.(md|rst|txt)$", re.I)
_CI_FILE = re.compile(r"^\.github/|(^|/)\.?ci/|Jenkinsfile|\.buildkite/")
# Labels by which maintainers call a PR a security fix or a breaking change: a label
# whose words hold one of these (`security`, `type: security`, `breaking-change`).
_SECURITY_LABEL = frozenset({"security", "vulnerability", "cve"})
_BREAKING_LABEL = frozenset({"breaking", "breaking-change", "breaking change"})


def _label_words(label: str) -> set[str]:
    return set(re.split(r"[\s:/_]+", label.lower()))


def is_security(pull: PullRequest) -> bool:
    """Whether the PR is a security fix, as its maintainers call it: a title's type,
    tag, scope or gitmoji (🔒), a label, or a CVE or GHSA id in the title
    (`bot.engine.conventions`). Never from the body, nor from a name that holds the
    word (`open-security-tools`): text any contributor writes claims nothing."""
    return _security(pull, parse_title(pull.title))


def _security(pull: PullRequest, title: Title) -> bool:
    return (title.security or bool(title.advisories)
            or any(_label_words(label) & _SECURITY_LABEL for label in pull.labels))


def is_breaking(pull: PullRequest, title: Title) -> bool:
    """A breaking change, as its title (`!`, `[BREAKING]`, 💥) or a label says."""
    return title.breaking or any(
        label.lower() in _BREAKING_LABEL or "breaking" in _label_words(label)
        for label in pull.labels)


class Classification(msgspec.Struct, frozen=True, kw_only=True):
    """`sync`: a branch sync (`master->dev`); `bump`: a dependency update (a PR of lock
    files alone is one); `release`: a version's release. None of them is ever a key
    PR."""

    type: str
    modules: tuple[str, ...]
    topics: tuple[str, ...]
    breaking: bool
    short_title: str
    security: bool = False
    sync: bool = False
    bump: bool = False
    release: bool = False


def _type_from_files(paths: list[str]) -> str | None:
    """docs, test or ci where every file is one, build for lock files alone (wherever
    they are: `.github/pyodide/pylock.toml`); release notes say nothing of the kind (a
    PR of them alone is docs)."""
    if not paths:
        return None
    if all(is_release_note(p) for p in paths):
        return "docs"
    if lock_files_only(paths):
        return "build"
    paths = where_changed(paths)
    if all(_DOC_FILE.search(p) for p in paths):
        return "docs"
    if all(map(is_test_file, paths)):
        return "test"
    if all(_CI_FILE.search(p) for p in paths):
        return "ci"
    return None


def infer_type(title: Title, labels: tuple[str, ...], paths: list[str]) -> str:
    """Title type first, then labels, then the files touched (all docs, tests or CI),
    then the wording. A PR touching only documentation is a docs change whatever type
    its title gives (`improvement: modularize AGENTS.md guides`), as the digest counts
    it (`bot.engine.themes.kind`); a revert stays a revert."""
    if title.type:
        if title.type != "revert" and _type_from_files(paths) == "docs":
            return "docs"
        said = _verb_type(title.text) if title.loose else None
        return said if said in _SAID_BY_VERB else title.type
    for label in labels:
        for word in re.split(r"[\s:/_-]+", label.lower()):
            kind = type_word(word)
            if kind:
                return kind
    by_files = _type_from_files(paths)
    if by_files:
        return by_files  # only docs, tests or CI, whatever verb the title opens with
    return _verb_type(title.text) or "other"


# Kinds an opening verb says plainly enough to stand over a loose type word.
_SAID_BY_VERB = frozenset({"fix", "feat", "perf", "refactor", "chore", "revert"})


def _verb_type(text: str) -> str | None:
    """The type a title's opening verb says (`Fix …`, `Add …`, `修复…`), or None."""
    for pattern, kind in _VERB_TYPES:
        if pattern.search(text):
            return kind
    return None


@lru_cache(maxsize=1024)
def _keywords_pattern(words: tuple[str, ...]) -> re.Pattern[str] | None:
    """Any of `words` as a whole word (`npu` in `npu_patch.py` or `NPU`, not in
    `input`): one pattern per rule, compiled once, so a PR is searched once per rule."""
    if not words:
        return None
    alternatives = "|".join(re.escape(w) for w in sorted(words, key=len, reverse=True))
    return re.compile(rf"(?<![A-Za-z0-9])(?:{alternatives})(?![A-Za-z])", re.I)


def _glob_match(path: str, glob: str) -> bool:
    if fnmatchcase(path, glob):
        return True
    # `**/x/**` also matches at the top level (`x/...`).
    return glob.startswith("**/") and fnmatchcase(path, glob[3:])


def topic_matches(pull: PullRequest, rule: TopicRule) -> bool:
    """A configured topic: keyword in title, body or a path; or a path glob matches.
    Release notes are no path of it (`bot.engine.areas.is_release_note`)."""
    paths = where_changed(f.path for f in pull.files)
    keywords = _keywords_pattern(rule.keywords)
    # The body without its template (checklists, tables, headings): a template that lists
    # every module would name each in every PR.
    if keywords and (keywords.search(pull.title) or keywords.search(_said_body(pull))
                     or any(keywords.search(path) for path in paths)):
        return True
    title = _keywords_pattern(rule.title)
    if title and title.search(pull.title):
        return True
    return any(_glob_match(path, glob) for glob in rule.paths for path in paths)


def topic_aliases(repo_config: RepoConfig) -> dict[str, str]:
    """Each alias of a configured topic, folded as title tags are compared, -> the
    topic: `[ckpt]` counts as `checkpoint` with `aliases = ["ckpt"]`."""
    return {fold_key(alias): name for name, rule in repo_config.topics.items()
            for alias in rule.aliases}


@lru_cache(maxsize=4096)
def _cleaned(body: str) -> str:
    return clean_body(body)


def _said_body(pull: PullRequest) -> str:
    return _cleaned(pull.body) if pull.body else ""


def _names_only_its_base(pull: PullRequest) -> bool:
    """A title that is only the branch the PR merges into (`Develop` into develop): a
    contributor's own branch of that name, merged with changes of its own, not a sync
    of two lines of work."""
    return pull.base is not None and pull.title.strip().lower() == pull.base.strip().lower()


def classify(pull: PullRequest, repo_config: RepoConfig) -> Classification:
    """Type, modules (title tags and labels) and topics (modules plus configured topics)."""
    title = parse_title(pull.title)
    paths = [f.path for f in pull.files]
    kind = infer_type(title, pull.labels, paths)
    aliases = topic_aliases(repo_config)
    modules: list[str] = []
    for tag in title.modules:
        name = aliases.get(fold_key(tag), tag)
        if name not in modules:
            modules.append(name)
    for label in pull.labels:
        name = normalise_module(label)
        name = aliases.get(fold_key(name), name)
        if name and canonical_type(name) is None and name not in modules:
            modules.append(name)
    topics = list(modules)
    for name, rule in repo_config.topics.items():
        if name not in topics and topic_matches(pull, rule):
            topics.append(name)
    # A PR of lock files alone relocks dependencies, whatever its title says.
    bump = title.bump or (is_bot(pull.author) and not title.release
                          and bool(_BOT_UPDATE.match(title.text))) or lock_files_only(paths)
    return Classification(
        type="build" if bump and kind in {"other", "chore"} else kind,
        modules=tuple(modules),
        topics=tuple(topics),
        breaking=is_breaking(pull, title),
        short_title=title.text,
        security=_security(pull, title),
        sync=title.sync and not _names_only_its_base(pull),
        bump=bump,
        release=title.release,
    )


# A bot account's update of a dependency ("Update dependency x to v2", "Update x to
# v1.2"); a bot's other updates ("Update FastAPI People") are no bump.
_BOT_UPDATE = re.compile(
    r"^(?:bump|update|upgrade|pin|lock)\b.*(?:\bdependenc(?:y|ies)\b|\bdeps\b|\bto v?\d)",
    re.I)


def fold_key(name: str) -> str:
    """A tag or alias compared without case or spacing (`KV Offloading`, `kv-offloading`)."""
    return normalise_module(name).replace("_", "-")
