"""`prdigest init`: a first config from a repository's own recent PRs.

Topics are what the repository already names (`bot.engine.discover`): the title tags
its PRs carry (`[npu]`, `fix(rollout):`), the names its titles and bodies use often
(`NPU`, `Ascend`) and the directories most PRs touch. The file is commented so a
newcomer can see what each part does, and is checked by loading it before it is written.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence

from bot.config import parse_config
from bot.engine.discover import suggest_topics
from bot.models import PullRequest, Snapshot
from bot.snapshot import data_time
from bot.week import resolve_week, week_of

SAMPLE_CHANNEL = "C0123456"
# How many topics the sample channel follows: the busiest.
FOLLOWED = 3
PUBLIC_URL_PLACEHOLDER = "https://prdigest.example.com"
_BARE_KEY = re.compile(r"^[A-Za-z0-9_-]+$")


def _key(name: str) -> str:
    """A TOML key: bare where TOML allows (`npu`), else quoted (`"图表"`)."""
    return name if _BARE_KEY.match(name) else json.dumps(name, ensure_ascii=False)


def digest_week(snapshot: Snapshot, timezone: str) -> str | None:
    """The week a first `digest` of a snapshot shows: the one `--week last` picks from
    its data when that week holds PRs, else the latest week that does (a file of one
    week holds none of the week before it); None for a file of no PRs."""
    moment = data_time(snapshot)
    if moment is None:
        return None
    last = resolve_week("last", moment, timezone)
    held = sorted({week_of(at, timezone) for pull in snapshot.pulls
                   if (at := pull.merged_at or pull.closed_at or pull.created_at)})
    if not held or last in held:
        return last
    return held[-1]


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
    topics = suggest_topics(repo, pulls)
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
        "# path), a word of its title, or a path glob; `aliases` are other tags naming it.",
    ]
    if not topics:
        lines.append("# (the PRs read share no title tag, name or directory; add topics here)")
    for topic in topics:
        fields = [f"{field} = {_value(value)}" for field, value in (
            ("keywords", topic.keywords), ("title", topic.title), ("paths", topic.paths),
            ("aliases", topic.aliases)) if value]
        lines += [f"# {topic.origin}", f"{_key(topic.name)} = {{ {', '.join(fields)} }}"]
    # The channel follows the busiest topics, whichever way they were found.
    followed = [t.name for t in sorted(topics, key=lambda t: -t.pulls)[:FOLLOWED]]
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
        "[server]",
        "# Where your team reaches this service: chat digests link each week's full report",
        "# under it. Until it is set they say where the report is instead of linking.",
        f'# public_url = "{PUBLIC_URL_PLACEHOLDER}"',
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
