"""`prdigest init`: a first config from a repository's own recent PRs.

Topics are what the repository already names: the title tags its PRs carry (`[npu]`,
`fix(rollout):`) and the directories most PRs touch. The file is commented so a newcomer
can see what each part does, and is checked by loading it before it is written.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import PurePosixPath

from bot.config import parse_config
from bot.engine.classify import canonical_type, parse_title
from bot.models import PullRequest

# How many of each kind of topic are suggested, and how many PRs make one worth it.
MAX_TAG_TOPICS = 8
MAX_DIRECTORY_TOPICS = 5
MIN_PULLS = 2
# Directories whose changes are not a subject of their own.
_ROUTINE_DIRECTORIES = frozenset({".github", "docs", "doc", "tests", "test", "examples",
                                  "scripts", "ci", ".ci", "benchmarks"})
SAMPLE_CHANNEL = "C0123456"
_TOML_KEY = re.compile(r"^[A-Za-z0-9_-]+$")


@dataclass(frozen=True)
class TopicSuggestion:
    """One topic for the config, with where it came from (the comment above it)."""

    name: str
    pulls: int
    keywords: tuple[str, ...] = ()
    paths: tuple[str, ...] = ()

    @property
    def origin(self) -> str:
        kind = "title tag" if self.keywords else "directory"
        return f"{kind}, in {self.pulls} PRs"


def tag_topics(pulls: Iterable[PullRequest]) -> list[TopicSuggestion]:
    """The title tags and conventional scopes the PRs use most, as keyword topics."""
    counts: Counter[str] = Counter()
    for pull in pulls:
        tags = {tag for tag in parse_title(pull.title).modules
                if _TOML_KEY.match(tag) and canonical_type(tag) is None}
        counts.update(tags)
    return [TopicSuggestion(name=tag, pulls=count, keywords=(tag,))
            for tag, count in _ranked(counts, MAX_TAG_TOPICS)]


def directory_topics(pulls: Iterable[PullRequest], taken: Iterable[str] = ()
                     ) -> list[TopicSuggestion]:
    """The directories (two levels deep at most) most PRs touch, as path topics; routine
    ones (docs, tests, CI) and those a tag topic already names are left out."""
    names = set(taken)
    counts: Counter[str] = Counter()
    for pull in pulls:
        counts.update({directory for change in pull.files
                       if (directory := _directory(change.path)) is not None})
    found = []
    for directory, count in _ranked(counts, len(counts)):
        name = _topic_name(PurePosixPath(directory).name)
        if name in names or not name:
            continue
        names.add(name)
        found.append(TopicSuggestion(name=name, pulls=count, paths=(f"{directory}/**",)))
        if len(found) == MAX_DIRECTORY_TOPICS:
            break
    return found


def _directory(path: str) -> str | None:
    parts = PurePosixPath(path).parts[:-1][:2]
    if not parts or parts[0].lower() in _ROUTINE_DIRECTORIES:
        return None
    if len(parts) == 2 and parts[1].lower() in _ROUTINE_DIRECTORIES:
        parts = parts[:1]
    return "/".join(parts)


def _topic_name(text: str) -> str:
    return re.sub(r"[^a-z0-9_-]+", "-", text.lower()).strip("-")


def _ranked(counts: Counter[str], limit: int) -> list[tuple[str, int]]:
    """Most PRs first, then by name (the same PRs give the same file)."""
    ranked = sorted(((name, count) for name, count in counts.items() if count >= MIN_PULLS),
                    key=lambda item: (-item[1], item[0]))
    return ranked[:limit]


def suggest_topics(pulls: Sequence[PullRequest]) -> list[TopicSuggestion]:
    tags = tag_topics(pulls)
    return tags + directory_topics(pulls, taken=(t.name for t in tags))


def _value(value: str | Sequence[str]) -> str:
    """A TOML string or array of strings (JSON's escapes are TOML's)."""
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    return "[" + ", ".join(json.dumps(item, ensure_ascii=False) for item in value) + "]"


def render_config(repo: str, pulls: Sequence[PullRequest], *, timezone: str, lang: str,
                  read_from: str, platforms: Sequence[tuple[str, str]]) -> str:
    """The commented config for `repo`, from `pulls` (read from `read_from`): its sample
    channel on the first of `platforms` (each a platform's name and what its channel
    ids look like)."""
    topics = suggest_topics(pulls)
    key = _value(repo)
    lines = [
        f"# prdigest config for {repo}, written by `prdigest init` from {len(pulls)} PRs",
        f"# read from {read_from}.",
        "# Edit freely: `prdigest digest ... --config <this file>` shows the effect.",
        "# Secrets never go here: each *_env key names the variable holding one.",
        "",
        f"[repos.{key}]",
        "# Weeks run Monday 00:00 to Monday 00:00 in this time zone.",
        f"timezone = {_value(timezone)}",
        "",
        f"[repos.{key}.topics]",
        "# A topic matches a PR by a keyword (a whole word in its title, body or a changed",
        "# path), a path glob, or a title tag; `aliases` are other tags naming the same topic.",
    ]
    if not topics:
        lines.append("# (the PRs read share no title tag or directory; add topics here)")
    for topic in topics:
        fields = []
        if topic.keywords:
            fields.append(f"keywords = {_value(topic.keywords)}")
        if topic.paths:
            fields.append(f"paths = {_value(topic.paths)}")
        lines += [f"# {topic.origin}", f"{topic.name} = {{ {', '.join(fields)} }}"]
    followed = [t.name for t in topics[:3]]
    hints = "; ".join(f"{name}: {hint}" for name, hint in platforms)
    lines += [
        "",
        "# Where the weekly digest goes. Set platform to one of "
        f"{', '.join(name for name, _ in platforms)}",
        f"# and replace the id with your channel's ({hints}).",
        "[[channels]]",
        f"platform = {_value(platforms[0][0])}",
        f"id = {_value(SAMPLE_CHANNEL)}",
        f"repo = {key}",
        f"lang = {_value(lang)}                 # zh | en",
        'schedule = "0 9 * * MON"      # cron, in the channel\'s time zone: Mondays 09:00',
        f"timezone = {_value(timezone)}",
        f"topics = {_value(followed)}   # first in its digest; merges on them are announced",
        "",
        "[github]",
        'token_env = "GITHUB_TOKEN"    # optional for public repositories',
        "",
        "[cache]",
        'url_env = "REDIS_URL"         # needed by `prdigest serve` and `prdigest post`',
        "",
    ]
    text = "\n".join(lines)
    check_config(text)
    return text


def check_config(text: str) -> None:
    """Refuse to write a config the loader would not read (a bug here, not the user's)."""
    import tomllib

    parse_config(tomllib.loads(text), source="prdigest init")


def next_commands(repo: str, output: str, *, platform: str, week: str = "last",
                  snapshot: str | None = None) -> str:
    """What to run after `init`, with this repository, week, file and the sample
    channel's `platform` filled in."""
    source = f" --snapshot {snapshot}" if snapshot else ""
    week = f"--week {week}"
    return "\n".join([
        f"wrote {output}. Next:",
        f"  prdigest digest {repo} {week} --config {output}{source} --format text",
        f"  prdigest digest {repo} {week} --config {output}{source} --format {platform}"
        f"   # what {platform} receives",
        f"  prdigest post {repo} {week} --channel {platform}:{SAMPLE_CHANNEL} --config {output}"
        f"{source} --dry-run",
        f"  prdigest serve --config {output}{source}",
        "",
    ])
