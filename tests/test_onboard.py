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
    # A tag is matched in titles, not wherever a body mentions the word.
    assert all(topics[tag].title == (tag,) and not topics[tag].keywords for tag in expected)
    # lumen/checkpoint/ is touched by three PRs and named by no tag: a path topic.
    assert topics["checkpoint"].paths == ("lumen/checkpoint/**",)
    [channel] = config.channels
    assert (channel.platform, channel.repo, channel.schedule) == ("slack", "acme/lumen",
                                                                  "0 9 * * MON")
    assert set(channel.topics) <= set(topics)
    assert "# " in out.read_text()  # commented for the reader
    assert channel.lang == "zh"  # as `digest` defaults
    # The next commands are printed with the week `--week last` picks from the file, and
    # the first of them works as printed.
    code, last, stderr = _run("digest", "acme/lumen", "--week", "last", "--config", str(out),
                              "--snapshot", SNAPSHOT, "--format", "json")
    assert code == 0, stderr
    week = json.loads(last)["week"]
    assert f"prdigest digest acme/lumen --week {week} " in stdout
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
    # Each tag topic's tags (one area's spellings, `[ckpt]` in checkpoint) are in two PRs
    # or more.
    tag_topics = [rule.title for rule in config.repo("acme/widgets").topics.values()
                  if rule.title]
    assert tag_topics and all(sum(counts[tag] for tag in tags) >= 2 for tags in tag_topics)
    assert "prdigest digest acme/widgets --week last" in stdout


def test_an_unknown_time_zone_is_one_line(tmp_path: Path) -> None:
    code, _, stderr = _run("init", "acme/lumen", "--snapshot", SNAPSHOT, "-o",
                           str(tmp_path / "x.toml"), "--timezone", "Mars/Olympus")
    assert code == 2 and "Mars/Olympus" in stderr and not (tmp_path / "x.toml").exists()


# --- a real repository (the target report's) ------------------------------------------


def _verl_init(shared_data: Path, tmp_path: Path, *extra: str) -> tuple[Path, str]:
    out = tmp_path / "verl.toml"
    code, stdout, stderr = _run("init", "verl-project/verl", "--snapshot",
                                str(shared_data / "verl-2026-07.json"), "-o", str(out), *extra)
    assert code == 0, stderr
    return out, stdout


@pytest.mark.realdata
def test_init_of_verl_knows_its_npu_work(shared_data: Path, tmp_path: Path) -> None:
    """verl's titles carry no [npu] tag, yet NPU is 12 of its 28 W29 PRs (the seed
    report): NPU, Ascend in titles and bodies, docker/ascend/** in paths. Its generic
    folders (verl/workers, verl/utils) are no subject, `[ckpt]` is checkpoint, and vLLM,
    which verl integrates with, is a tag matched in titles, not in every body."""
    out, stdout = _verl_init(shared_data, tmp_path)
    config = load_config(out)
    topics = config.repo("verl-project/verl").topics
    npu = topics["npu"]
    assert {"npu", "ascend"} <= set(npu.keywords)
    assert not {"workers", "utils", "ckpt", "experimental"} & set(topics)
    globs = {glob for rule in topics.values() for glob in rule.paths}
    assert not {"verl/workers/**", "verl/utils/**"} & globs
    assert "ckpt" in topics["checkpoint"].aliases
    assert not topics["vllm"].keywords
    [channel] = config.channels
    assert channel.lang == "zh"
    code, digest, stderr = _run("digest", "verl-project/verl", "--week", "2026-W29",
                                "--config", str(out), "--snapshot",
                                str(shared_data / "verl-2026-07.json"), "--format", "json")
    assert code == 0, stderr
    counted = {t["name"]: t for t in json.loads(digest)["topics"]}
    assert counted["npu"]["count"] == 12 and round(counted["npu"]["share"] * 100) == 43
    assert counted["vllm"]["share"] < 0.25  # it read "vllm 相关 PR 占比 50%"
    # `--week last` of this file is W29 (its data runs into W30): init suggests that.
    assert "--week 2026-W29 " in stdout


@pytest.mark.realdata
def test_init_lang_can_be_english(shared_data: Path, tmp_path: Path) -> None:
    out, _ = _verl_init(shared_data, tmp_path, "--lang", "en")
    assert [c.lang for c in load_config(out).channels] == ["en"]


@pytest.mark.realdata
def test_init_of_verl_folds_a_tags_folder_into_its_topic(shared_data: Path,
                                                         tmp_path: Path) -> None:
    """verl tags fully-async PRs `[fully_async]` and keeps their code in
    verl/experimental/fully_async_policy: one topic, the tag's."""
    out, _ = _verl_init(shared_data, tmp_path)
    topics = load_config(out).repo("verl-project/verl").topics
    assert "fully_async" in topics and "fully_async_policy" not in topics
    globs = {glob for rule in topics.values() for glob in rule.paths}
    assert not any("fully_async_policy" in glob for glob in globs)
