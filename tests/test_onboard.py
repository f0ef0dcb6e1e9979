"""`prdigest init`: a config from the repository's own PRs, which the loader reads and
`digest` uses; offline from a snapshot or live from (the fake) GitHub."""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
from typer.testing import CliRunner

from bot.cli import app
from bot.config import load_config
from bot.snapshot import read_snapshot
from bot.week import current_week, shift_week
from testkit import EXAMPLES
from testkit.fakes.github import FakeGitHub
from testkit.fakes.github_fixtures import build_week

SNAPSHOT = str(EXAMPLES / "snapshot.json")


def _run(*args: str, env: dict[str, str | None] | None = None) -> tuple[int, str, str]:
    result = CliRunner().invoke(app, list(args), env=env)
    return result.exit_code, result.stdout, result.stderr


def _tags_in_titles(titles: list[str]) -> Counter[str]:
    """Leading `[a, b]` tags per title, counted once per PR (independent of the engine)."""
    counts: Counter[str] = Counter()
    for title in titles:
        lead = re.match(r"^((?:\[[^\]]*\]\s*)+)", title)
        tags = {t.strip().lower() for group in re.findall(r"\[([^\]]*)\]", lead[1] if lead
                                                         else "") for t in group.split(",")}
        counts.update(tags)
    return counts


def test_init_from_a_snapshot_writes_a_config_of_the_repositorys_own_topics(
        tmp_path: Path) -> None:
    out = tmp_path / "prdigest.toml"
    code, stdout, stderr = _run("init", "acme/lumen", "--snapshot", SNAPSHOT, "-o", str(out))
    assert code == 0, stderr
    config = load_config(out)  # the written file loads with the real loader
    topics = config.repo("acme/lumen").topics
    # The title tags of two or more PRs, except those naming a type (`[ci]`, `[doc]`).
    counts = _tags_in_titles([p.title for p in read_snapshot(Path(SNAPSHOT)).pulls])
    expected = {tag for tag, n in counts.items() if n >= 2} - {"ci", "doc", "breaking"}
    assert expected == {"npu", "rollout", "trainer"}
    assert expected <= set(topics)
    assert all(topics[tag].keywords == (tag,) for tag in expected)
    # lumen/checkpoint/ is touched by three PRs and named by no tag: a path topic.
    assert topics["checkpoint"].paths == ("lumen/checkpoint/**",)
    [channel] = config.channels
    assert (channel.platform, channel.repo, channel.schedule) == ("slack", "acme/lumen",
                                                                  "0 9 * * MON")
    assert set(channel.topics) <= set(topics)
    assert "# " in out.read_text()  # commented for the reader
    # The next commands are printed, and the first of them works as printed.
    assert "prdigest digest acme/lumen --week 2026-W29" in stdout
    code, digest, stderr = _run("digest", "acme/lumen", "--week", "2026-W29", "--config",
                                str(out), "--snapshot", SNAPSHOT, "--format", "json")
    assert code == 0, stderr
    assert "checkpoint" in {t["name"] for t in json.loads(digest)["topics"]}


def test_init_keeps_an_existing_file_unless_forced(tmp_path: Path) -> None:
    out = tmp_path / "prdigest.toml"
    out.write_text("# mine\n")
    code, _, stderr = _run("init", "acme/lumen", "--snapshot", SNAPSHOT, "-o", str(out))
    assert code == 2 and "exists" in stderr and out.read_text() == "# mine\n"
    code, _, stderr = _run("init", "acme/lumen", "--snapshot", SNAPSHOT, "-o", str(out),
                           "--force")
    assert code == 0, stderr
    assert load_config(out).repo("acme/lumen").topics


@pytest.fixture
def github() -> Iterator[FakeGitHub]:
    last = shift_week(current_week(datetime.now(UTC), "Asia/Shanghai"), -1)
    with FakeGitHub(token="ghp_fake") as server:
        server.add_repo("acme/widgets", build_week("acme/widgets", count=30, week=last))
        yield server


def test_init_reads_the_last_weeks_from_github(github: FakeGitHub, tmp_path: Path) -> None:
    settings = tmp_path / "github.toml"
    settings.write_text(f'[github]\napi_url = "{github.base_url}"\ntoken_env = "TEST_GH"\n')
    out = tmp_path / "prdigest.toml"
    code, stdout, stderr = _run("init", "acme/widgets", "-o", str(out), "--config",
                                str(settings), "--weeks", "2", env={"TEST_GH": "ghp_fake"})
    assert code == 0, stderr
    config = load_config(out)
    titles = [p.title for p in github.repos["acme/widgets"].pulls.values()]
    counts = _tags_in_titles(titles)
    tag_topics = {name for name, rule in config.repo("acme/widgets").topics.items()
                  if rule.keywords}
    assert tag_topics and all(counts[name] >= 2 for name in tag_topics)
    assert "prdigest digest acme/widgets --week last" in stdout


def test_an_unknown_time_zone_is_one_line(tmp_path: Path) -> None:
    code, _, stderr = _run("init", "acme/lumen", "--snapshot", SNAPSHOT, "-o",
                           str(tmp_path / "x.toml"), "--timezone", "Mars/Olympus")
    assert code == 2 and "Mars/Olympus" in stderr and not (tmp_path / "x.toml").exists()
