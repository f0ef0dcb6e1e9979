"""The topics a repository's own PRs name, for `prdigest init`: its title tags, the words
its titles and bodies use often, and its busiest folders.

Each is an area (`bot.engine.areas`), so `[ckpt]` and `[checkpoint]` make one topic, and
`npu` in a body and `docker/ascend/` one more. A tag is matched in titles only: a product
the repository integrates with is mentioned in many bodies (`vllm` in verl's) and would
count every PR that only mentions it. A word makes a topic when it is a name (written
with a capital somewhere, or part of a changed path), is in at least `WORD_SHARE` of the
PRs and in fewer than `COMMON_SHARE`: a word in most PRs tells none apart.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import PurePosixPath

from bot.config import RepoConfig
from bot.engine.areas import (
    BUILTIN,
    GENERIC_FOLDERS,
    Areas,
    area_folder,
    week_trunk,
    where_changed,
)
from bot.engine.conventions import canonical_type, parse_title
from bot.engine.lexicon import lexicon
from bot.engine.text import clean_body
from bot.i18n import translator
from bot.models import PullRequest

# How many topics of each kind are suggested, and how many PRs make one worth it.
MAX_TAG_TOPICS = 8
MAX_WORD_TOPICS = 3
MAX_DIRECTORY_TOPICS = 5
MIN_PULLS = 2
# The folders a directory topic's globs name (an area found in several places).
MAX_FOLDERS = 3
WORD_SHARE = 0.15
COMMON_SHARE = 0.5
# Directories whose changes are not a subject of their own.
ROUTINE_DIRECTORIES = frozenset({".github", "docs", "doc", "tests", "test", "examples",
                                 "scripts", "ci", ".ci", "benchmarks", ".buildkite"})
# A tag or scope that can name a topic: letters (of any script: `图表`, `X-Pack`), digits,
# `_` and `-`.
TOPIC_NAME = re.compile(r"^[^\W_][\w-]*$")
_WORD = re.compile(r"(?<![\w./-])([A-Za-z][A-Za-z0-9_]*[A-Za-z0-9])(?![\w/-]|\.\w)")
# Words of PR prose that name no subject, however often they come.
_PROSE = frozenset((
    "a", "about", "above", "across", "add", "added", "adds", "after", "again", "against",
    "all", "allow", "also", "an", "and", "any", "are", "as", "at", "avoid", "be",
    "because", "been", "before", "being", "below", "between", "both", "bug", "but", "by",
    "can", "cannot", "case", "change", "changed", "changes", "check", "checks", "code",
    "commit", "config", "could", "current", "default", "does", "done", "during", "each",
    "enable", "error", "example", "existing", "file", "files", "first", "fix", "fixed",
    "fixes", "for", "from", "get", "has", "have", "how", "if", "in", "instead", "into",
    "is", "issue", "issues", "it", "its", "just", "make", "may", "merge", "more", "most",
    "must", "need", "new", "no", "none", "not", "now", "of", "on", "one", "only", "or",
    "other", "out", "over", "path", "per", "pr", "pull", "related", "release", "remove",
    "request", "run", "same", "see", "should", "since", "so", "some", "step", "such",
    "support", "supports", "test", "tested", "tests", "than", "that", "the", "their",
    "them", "then", "there", "these", "they", "this", "those", "to", "true", "false",
    "type", "under", "up", "update", "updated", "use", "used", "uses", "using", "value",
    "via", "was", "we", "what", "when", "where", "which", "while", "who", "why", "will",
    "with", "without", "would", "you", "your", "https", "http", "www", "com", "github",
    "org", "main", "master", "version",
))


@dataclass(frozen=True)
class TopicSuggestion:
    """One topic for the config: how it matches (title words and tag aliases, keywords,
    path globs) and where it came from (the comment above it)."""

    name: str
    pulls: int
    origin: str
    title: tuple[str, ...] = ()
    keywords: tuple[str, ...] = ()
    paths: tuple[str, ...] = ()
    aliases: tuple[str, ...] = ()
    # The PRs it was found in (not written to the config).
    numbers: frozenset[int] = frozenset()


def suggest_topics(repo: str, pulls: Sequence[PullRequest]) -> list[TopicSuggestion]:
    """Tag topics, then word topics, then directory topics; none twice."""
    areas = Areas(RepoConfig(), translator("en"))
    owner, _, name = repo.lower().partition("/")
    tags = tag_topics(pulls, areas)
    taken = {areas.key(t.name) for t in tags}
    words = word_topics(pulls, areas, taken=taken, own={owner, name})
    folders = directory_topics(pulls, areas, package=name)
    by_word = {areas.key(t.name): i for i, t in enumerate(words)}
    rest: list[TopicSuggestion] = []
    tagged = {spelling for t in tags for spelling in (t.name, *t.title)}
    for folder in folders:
        area = areas.key(folder.name)
        if area in taken or _extends(folder.name, tagged) or _mostly_tagged(folder, tags):
            continue  # a tag's topic: counted by its tag, not by every PR in its folder
        if area in by_word:  # a word's topic: its folder too (`docker/ascend/**` for npu)
            words[by_word[area]] = _with_paths(words[by_word[area]], folder.paths)
        elif len(rest) < MAX_DIRECTORY_TOPICS:
            rest.append(folder)
        taken.add(area)
    return tags + words + rest


def _mostly_tagged(folder: TopicSuggestion, tags: list[TopicSuggestion]) -> bool:
    """Whether a folder and a tag are mostly the same PRs (more than half of each): the
    tag's area, named in another language or word (dataease's `views/chart` of
    `fix(图表): …`)."""
    return any(len(both := folder.numbers & tag.numbers) * 2 > len(folder.numbers)
               and len(both) * 2 > len(tag.numbers) for tag in tags)


def _extends(name: str, tags: set[str]) -> bool:
    """Whether a folder's name is a tag's with more after it (`fully_async_policy` of
    `[fully_async]`): the tag's area, however its folder is spelled."""
    return any(name.startswith(f"{tag}{sep}") for tag in tags for sep in "_-")


def _with_paths(topic: TopicSuggestion, paths: tuple[str, ...]) -> TopicSuggestion:
    return TopicSuggestion(name=topic.name, pulls=topic.pulls,
                           origin=f"{topic.origin}, and the folder {', '.join(paths)}",
                           title=topic.title, keywords=topic.keywords,
                           paths=(*topic.paths, *paths), aliases=topic.aliases,
                           numbers=topic.numbers)


def _area_name(area: str, spellings: Counter[str]) -> str:
    """A topic's name: a common area's key (`checkpoint` for `[ckpt]`), else the spelling
    used most (ties: the shortest, then alphabetical)."""
    if area in BUILTIN:
        return area
    return min(spellings, key=lambda s: (-spellings[s], len(s), s))


def names_no_subject(name: str) -> bool:
    """A name no team keeps as a topic: a type (`fix`), a verb (`bump`, `update`), a
    prose word, or a generic folder (`src`, `utils`, `common`)."""
    low = name.lower()
    return (canonical_type(low) is not None or low in lexicon().forms or low in _PROSE
            or low in GENERIC_FOLDERS or low in ROUTINE_DIRECTORIES - {"ci", "docs", "doc"})


def tag_topics(pulls: Iterable[PullRequest], areas: Areas) -> list[TopicSuggestion]:
    """The title tags and conventional scopes of two PRs or more, in any script
    (`fix(图表): …`), spellings of one area together (`[ckpt]` in `checkpoint`), matched
    in titles."""
    numbers: dict[str, set[int]] = defaultdict(set)
    spellings: dict[str, Counter[str]] = defaultdict(Counter)
    for pull in pulls:
        for tag in parse_title(pull.title).modules:
            if TOPIC_NAME.match(tag) and not names_no_subject(tag):
                area = areas.key(tag)
                numbers[area].add(pull.number)
                spellings[area][tag] += 1
    found = []
    for area in _ranked({a: len(n) for a, n in numbers.items()}, MAX_TAG_TOPICS):
        name = _area_name(area, spellings[area])
        used = tuple(sorted(spellings[area], key=lambda s: (-spellings[area][s], s)))
        found.append(TopicSuggestion(
            name=name, pulls=len(numbers[area]), title=used,
            aliases=tuple(s for s in used if s != name), numbers=frozenset(numbers[area]),
            origin="title tag " + ", ".join(f"[{s}]" for s in sorted(spellings[area]))
                   + f", in {len(numbers[area])} PRs"))
    return found


def word_topics(pulls: Sequence[PullRequest], areas: Areas, *, taken: set[str],
                own: set[str]) -> list[TopicSuggestion]:
    """Names the titles and bodies use in `WORD_SHARE` to `COMMON_SHARE` of the PRs, one
    topic per area (`npu` and `ascend` are one), none of a tag's area or the
    repository's own name."""
    mentions: dict[str, set[int]] = defaultdict(set)
    # A name is written with capitals inside a sentence (`NPU`, `vLLM`, `on Ascend`) in
    # two PRs or more, and is part of a changed path: prose words are neither.
    capitalised: dict[str, set[int]] = defaultdict(set)
    in_paths: set[str] = set()
    for pull in pulls:
        text = f"{pull.title}\n{clean_body(pull.body) if pull.body else ''}"
        for match in _WORD.finditer(text):
            word = match.group(1)
            lowered = word.lower()
            mentions[lowered].add(pull.number)
            if word != lowered and not _opens_sentence(text, match.start()):
                capitalised[lowered].add(pull.number)
        for path in where_changed(change.path for change in pull.files):
            in_paths.update(part.lower() for part in re.split(r"[/_.\-]", path) if part)
    named = {w for w, numbers in capitalised.items() if len(numbers) >= MIN_PULLS} & in_paths
    total = len(pulls)
    candidates: dict[str, set[str]] = defaultdict(set)
    for word, numbers in mentions.items():
        share = len(numbers) / total if total else 0.0
        if (WORD_SHARE <= share < COMMON_SHARE and len(numbers) >= MIN_PULLS
                and word in named and word not in own and len(word) >= 3
                and not names_no_subject(word)):
            area = areas.key(word)
            if area not in taken:
                candidates[area].add(word)
    counts = {area: len(set().union(*(mentions[w] for w in words)))
              for area, words in candidates.items()}
    found = []
    for area in _ranked(counts, MAX_WORD_TOPICS):
        words = sorted(candidates[area], key=lambda w: (-len(mentions[w]), w))
        name = area if area in BUILTIN else words[0]
        found.append(TopicSuggestion(
            name=name, pulls=counts[area], keywords=tuple(words),
            numbers=frozenset(set().union(*(mentions[w] for w in words))),
            origin=f"in the titles and bodies of {counts[area]} PRs "
                   f"({', '.join(words)})"))
    return found


def _opens_sentence(text: str, at: int) -> bool:
    """Whether the word at `at` begins a line or a sentence (capitalised as any word is)."""
    before = text[:at].rstrip(" \t*_`([\"'")
    return not before or before[-1] in "\n.!?:;>-#"


def directory_topics(pulls: Sequence[PullRequest], areas: Areas, *, package: str
                     ) -> list[TopicSuggestion]:
    """The folders most PRs touch that name an area, as path topics: below the
    package's folder, generic folders and the trunk every PR is in (`frontend/src/views`
    of 1Panel: its `container`, `host`, `database`), the way the digest finds areas
    (`bot.engine.areas.folder_area`); never generic or routine ones (docs, tests, CI).
    One per area, busiest first, its globs the folders it was found in."""
    trunk = week_trunk([[change.path for change in pull.files] for pull in pulls], package)
    counts: Counter[str] = Counter()
    folders: dict[str, Counter[str]] = defaultdict(Counter)
    numbers: dict[str, set[int]] = defaultdict(set)
    for pull in pulls:
        found: set[str] = set()
        for change in pull.files:
            folder = area_folder(change.path, package, trunk)
            name = re.sub(r"[^\w-]+", "-", PurePosixPath(folder).name.lower()).strip("-")
            if folder and name and not names_no_subject(name):
                found.add(areas.key(name))
                folders[areas.key(name)][folder] += 1
        counts.update(found)
        for area in found:
            numbers[area].add(pull.number)
    found_topics = []
    for area in _ranked(dict(counts), len(counts)):
        where = [folder for folder, _ in folders[area].most_common(MAX_FOLDERS)]
        name = re.sub(r"[^\w-]+", "-", PurePosixPath(where[0]).name.lower()).strip("-")
        found_topics.append(TopicSuggestion(
            name=_area_name(area, Counter({name: 1})), pulls=counts[area],
            paths=tuple(f"{folder}/**" for folder in sorted(where)),
            numbers=frozenset(numbers[area]), origin=f"directory, in {counts[area]} PRs"))
    return found_topics


def _ranked(counts: dict[str, int], limit: int) -> list[str]:
    """Most PRs first, then by name (the same PRs give the same file)."""
    ranked = sorted((name for name, count in counts.items() if count >= MIN_PULLS),
                    key=lambda name: (-counts[name], name))
    return ranked[:limit]
