"""What a PR is about: its change type, modules and topics, from title, labels and files.

Two title conventions are understood: `[BREAKING][npu, ckpt] fix: ...` (modules plus a
conventional type) and bracket tags such as `[Bugfix][ROCm] ...`. Known typos of real
titles (`chrore`) are tolerated by fuzzy matching against the known types.
"""

from __future__ import annotations

import difflib
import re
from fnmatch import fnmatchcase
from functools import lru_cache

import msgspec

from bot.config import RepoConfig, TopicRule
from bot.models import PullRequest

TYPES = (
    "feat", "fix", "perf", "refactor", "docs", "test", "ci", "build", "chore", "style",
    "revert",
)
# Words used for a type in titles, labels and tags, mapped to the canonical type.
_TYPE_WORDS = {
    "feat": "feat", "feature": "feat", "features": "feat", "enhancement": "feat",
    "fix": "fix", "bugfix": "fix", "bug": "fix", "hotfix": "fix", "fixes": "fix",
    "perf": "perf", "performance": "perf",
    "refactor": "refactor", "refactoring": "refactor", "cleanup": "refactor",
    "doc": "docs", "docs": "docs", "documentation": "docs",
    "test": "test", "tests": "test", "ut": "test",
    "ci": "ci", "build": "build", "deps": "build", "dependencies": "build",
    "chore": "chore", "misc": "chore", "style": "style", "revert": "revert",
}
# Tags that name a type in bracket conventions, not a module.
_TYPE_TAGS = {
    "bugfix": "fix", "fix": "fix", "hotfix": "fix", "feat": "feat", "feature": "feat",
    "perf": "perf", "performance": "perf", "refactor": "refactor", "doc": "docs",
    "docs": "docs", "misc": "chore", "chore": "chore", "test": "test", "tests": "test",
    "ut": "test",
}
_LEADING_TAGS = re.compile(r"^\s*((?:\[[^\]]*\]\s*)+)")
_TAG = re.compile(r"\[([^\]]*)\]")
# Parts of a tag that name no module: a series number (`[1/n]`, `[2/3]`).
_NOT_A_MODULE = re.compile(r"^(?:\d+|n|part-?\d+)$", re.I)
_CONVENTIONAL = re.compile(r"^\s*([A-Za-z]+)(?:\(([^)]*)\))?(!)?\s*:\s*(.*)$", re.S)
_VERB_TYPES = (
    (re.compile(r"^(fix|fixes|fixed|correct|repair|resolve|handle|prevent|avoid)\b", re.I),
     "fix"),
    (re.compile(r"^(add|adds|added|support|implement|introduce|enable|expose|allow)\b", re.I),
     "feat"),
    (re.compile(r"^(optimi[sz]e|speed up|accelerate|faster|reduce)\b", re.I), "perf"),
    (re.compile(r"^(refactor|remove|clean ?up|simplify|rename|move|split|migrate)\b", re.I),
     "refactor"),
    (re.compile(r"^(update|bump|upgrade|pin|sync)\b", re.I), "chore"),
    (re.compile(r"^revert\b", re.I), "revert"),
)
_DOC_FILE = re.compile(r"(^|/)(docs?/|README|CHANGELOG)|\.(md|rst|txt)$", re.I)
_TEST_FILE = re.compile(r"(^|/)tests?/|(^|/)test_[^/]*$|_test\.py$")
_CI_FILE = re.compile(r"^\.github/|(^|/)\.?ci/|Jenkinsfile|\.buildkite/")


# A security fix, named as such in the title, a label or the body.
_SECURITY = re.compile(
    r"\bsecurity\b|\bCVE-?\d*|\bvulnerab\w*|\bdeserializ\w*|\binjection\b|\bGHSA-", re.I)


# Lowercase stems one of which every `_SECURITY` match holds: a cheap test first.
_SECURITY_STEMS = ("secur", "cve", "vulnerab", "deserializ", "injection", "ghsa-")


def _names_security(text: str) -> bool:
    folded = text.casefold()
    return any(stem in folded for stem in _SECURITY_STEMS) and bool(_SECURITY.search(text))


def is_security(pull: PullRequest) -> bool:
    """Whether the PR is a security fix: it is its own kind of change, reported
    wherever it matters (summary, themes, risks, suggestions)."""
    return (_names_security(pull.title) or any(_names_security(x) for x in pull.labels)
            or bool(pull.body and _names_security(pull.body)))


class Title(msgspec.Struct, frozen=True, kw_only=True):
    modules: tuple[str, ...]
    type: str | None
    breaking: bool
    text: str


class Classification(msgspec.Struct, frozen=True, kw_only=True):
    type: str
    modules: tuple[str, ...]
    topics: tuple[str, ...]
    breaking: bool
    short_title: str
    security: bool = False


@lru_cache(maxsize=4096)
def canonical_type(word: str) -> str | None:
    """The conventional type a word names, tolerating one-letter typos (`chrore`)."""
    lowered = word.lower().strip()
    if lowered in _TYPE_WORDS:
        return _TYPE_WORDS[lowered]
    close = difflib.get_close_matches(lowered, list(_TYPE_WORDS), n=1, cutoff=0.8)
    return _TYPE_WORDS[close[0]] if close and len(lowered) >= 4 else None


def _normalise_module(tag: str) -> str:
    return re.sub(r"\s+", "-", tag.strip().lower())


def parse_title(title: str) -> Title:
    """Split `[BREAKING][npu, ckpt] fix: text` into modules, type, breaking, text."""
    tags: list[str] = []
    breaking = False
    kind: str | None = None
    rest = title.strip()
    leading = _LEADING_TAGS.match(rest)
    if leading:
        rest = rest[leading.end():]
        for group in _TAG.findall(leading.group(1)):
            for tag in re.split(r"[,，/|]", group):
                name = _normalise_module(tag)
                if name in {"breaking", "breaking-change"}:
                    breaking = True
                elif name and name not in tags and not _NOT_A_MODULE.match(name):
                    tags.append(name)
    conventional = _CONVENTIONAL.match(rest)
    word_type = canonical_type(conventional.group(1)) if conventional else None
    if conventional and word_type is not None:
        # `[doc] chore: ...`: the type is after the tags, so every tag is a module.
        kind, rest = word_type, conventional.group(4)
        breaking = breaking or bool(conventional.group(3))
        for scope in (conventional.group(2) or "").split(","):
            name = _normalise_module(scope)
            if name and name not in tags:
                tags.append(name)
        modules = tags
    else:
        # `[Bugfix][ROCm] ...`: a tag that names a type is the type, the rest are modules.
        modules = []
        for name in tags:
            if name in _TYPE_TAGS and kind is None:
                kind = _TYPE_TAGS[name]
            elif name not in _TYPE_TAGS:
                modules.append(name)
    text = rest.strip().lstrip(":：-– ").strip()
    return Title(modules=tuple(modules), type=kind, breaking=breaking, text=text or title)


def _type_from_files(paths: list[str]) -> str | None:
    if not paths:
        return None
    if all(_DOC_FILE.search(p) for p in paths):
        return "docs"
    if all(_TEST_FILE.search(p) for p in paths):
        return "test"
    if all(_CI_FILE.search(p) for p in paths):
        return "ci"
    return None


def infer_type(title: Title, labels: tuple[str, ...], paths: list[str]) -> str:
    """Title type first, then labels, then the wording and the files touched."""
    if title.type:
        return title.type
    for label in labels:
        for word in re.split(r"[\s:/_-]+", label.lower()):
            kind = _TYPE_WORDS.get(word)
            if kind:
                return kind
    for pattern, kind in _VERB_TYPES:
        if pattern.search(title.text):
            return kind
    return _type_from_files(paths) or "other"


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
    """A configured topic: keyword in title, body or a path; or a path glob matches."""
    paths = [f.path for f in pull.files]
    keywords = _keywords_pattern(rule.keywords)
    if keywords and (keywords.search(pull.title) or keywords.search(pull.body or "")
                     or any(keywords.search(path) for path in paths)):
        return True
    title = _keywords_pattern(rule.title)
    if title and title.search(pull.title):
        return True
    return any(_glob_match(path, glob) for glob in rule.paths for path in paths)


def topic_aliases(repo_config: RepoConfig) -> dict[str, str]:
    """Each alias of a configured topic, spelled as title tags are read, -> the topic:
    `[ckpt]` counts as `checkpoint` with `aliases = ["ckpt"]`."""
    return {_normalise_module(alias): name for name, rule in repo_config.topics.items()
            for alias in rule.aliases}


def classify(pull: PullRequest, repo_config: RepoConfig) -> Classification:
    """Type, modules (title tags and labels) and topics (modules plus configured topics)."""
    title = parse_title(pull.title)
    paths = [f.path for f in pull.files]
    kind = infer_type(title, pull.labels, paths)
    aliases = topic_aliases(repo_config)
    modules: list[str] = []
    for tag in title.modules:
        name = aliases.get(tag, tag)
        if name not in modules:
            modules.append(name)
    for label in pull.labels:
        name = _normalise_module(label)
        name = aliases.get(name, name)
        if name and canonical_type(name) is None and name not in modules:
            modules.append(name)
    topics = list(modules)
    for name, rule in repo_config.topics.items():
        if name not in topics and topic_matches(pull, rule):
            topics.append(name)
    return Classification(
        type=kind,
        modules=tuple(modules),
        topics=tuple(topics),
        breaking=title.breaking,
        short_title=title.text,
        security=is_security(pull),
    )
