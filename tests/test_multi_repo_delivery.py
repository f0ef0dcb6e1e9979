"""A channel of several repositories on the schedule and in notices: one post per week
and channel across replicas, each repository's week fetched once, merges of any listed
repository noticed; and the real verl and vLLM weeks combined."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from bot.cli import app
from bot.clock import HeldClock
from bot.config import ChannelConfig
from bot.delivery.notices import MergeNotifier
from bot.digests import Digests
from bot.models import Reply
from bot.source import SnapshotSource
from bot.store.cache import CachedSource
from bot.store.claims import Claims
from bot.store.redis.cache import Cache
from testkit.coordination import memory_port
from testkit.multi_repo import LUMEN, PRISM, prism_snapshot, two_repo_config
from testkit.schedule import (
    CountingSource,
    FakePlatforms,
    FakePoster,
    at,
    redis_port,
    scheduler,
    tick_at,
)
from testkit.schedule import WeekOnly as _WeekOnly
from testkit.server_support import example_snapshot

REDIS_TOPOLOGIES = ("single", "cluster")
MONDAY_9 = at("2026-07-20T01:00")  # 09:00 in Shanghai; the week owed is 2026-W29


def _channel(platform: str, id: str, **fields: Any) -> dict[str, Any]:
    return {"platform": platform, "id": id, "timezone": "Asia/Shanghai", **fields}


async def test_replicas_post_a_multi_repository_channel_once_and_fetch_each_week_once(
    redis_url: str
) -> None:
    config = two_repo_config(
        _channel("slack", "BOTH", repos=[LUMEN, PRISM]),
        _channel("feishu", "BOTH", repos=[PRISM, LUMEN], lang="en"),
        _channel("telegram", "LUMEN", repo=LUMEN),
        _channel("slack", "PRISM", repo=PRISM),
    )
    clock = HeldClock(MONDAY_9)
    platforms = FakePlatforms(clock)
    github = CountingSource(example_snapshot())
    async with redis_port(redis_url) as client:
        cache = Cache.from_url(redis_url)
        try:
            source = CachedSource(_WeekOnly(github), cache, config)
            replicas = [scheduler(config, source, client,
                                  FakePoster(platforms, f"r{n}", latency=0.01), clock,
                                  replica=f"r{n}") for n in range(3)]
            await asyncio.gather(*(r.tick() for r in replicas))
            again = await tick_at(replicas[0], at("2026-07-20T01:10"))
        finally:
            cache.close()
    assert platforms.counts() == {
        ("2026-W29", "slack:BOTH", f"{LUMEN}, {PRISM}"): 1,
        ("2026-W29", "feishu:BOTH", f"{PRISM}, {LUMEN}"): 1,
        ("2026-W29", "telegram:LUMEN", LUMEN): 1,
        ("2026-W29", "slack:PRISM", PRISM): 1,
    }
    assert {r.status for r in again} == {"already-posted"}
    assert {r.repo for r in again if r.channel == "slack:BOTH"} == {f"{LUMEN}, {PRISM}"}
    # Four channels over two repositories: each repository's weeks read once in all.
    assert github.reads == {(repo, week): 1 for repo in (LUMEN, PRISM)
                            for week in ("2026-W29", "2026-W28")}


async def test_a_merge_in_any_listed_repository_is_noticed_once() -> None:
    config = two_repo_config(_channel("slack", "BOTH", repos=[LUMEN, PRISM],
                                      topics=["npu"]))
    sent: list[tuple[str, str, int]] = []

    class Sender:
        def can_send(self, channel: ChannelConfig) -> bool:
            return True

        async def send(self, channel: ChannelConfig, reply: Reply, *,
                       thread: str | None = None, key: str | None = None) -> list[str]:
            assert reply.pull is not None and thread is None
            sent.append((channel.key, reply.pull.repository, reply.pull.number))
            return ["m"]

    source = SnapshotSource(example_snapshot(), prism_snapshot())
    shared = memory_port()
    replicas = [MergeNotifier(Digests(config, source), Claims(shared), Sender())
                for _ in range(2)]
    lumen = next(p for p in example_snapshot().pulls if p.number == 1212)  # [trainer, npu]
    prism = next(p for p in prism_snapshot().pulls if p.number == 2002)   # [npu] perf
    await asyncio.gather(*(r.announce(repo, pull) for r in replicas
                           for repo, pull in ((LUMEN, lumen), (PRISM, prism))))
    assert sorted(sent) == [("slack:BOTH", LUMEN, 1212), ("slack:BOTH", PRISM, 2002)]


# --- the real weeks ---------------------------------------------------------------------

VERL, VLLM = "verl-project/verl", "vllm-project/vllm"
REAL_CONFIG = f"""
[repos."{VERL}"]
timezone = "Asia/Shanghai"
[repos."{VERL}".topics]
npu = {{ keywords = ["npu", "ascend"] }}
[repos."{VLLM}"]
timezone = "Asia/Shanghai"
"""


def _real(shared_data: Path, tmp_path: Path, *repos: str, fmt: str = "json",
          lang: str = "en") -> str:
    config = tmp_path / "real.toml"
    config.write_text(REAL_CONFIG)
    files = {VERL: "verl-2026-07.json", VLLM: "vllm-2026-W29.json"}
    snapshots = [arg for repo in repos for arg in ("--snapshot", str(shared_data / files[repo]))]
    result = CliRunner().invoke(app, ["digest", *repos, "--week", "2026-W29", *snapshots,
                                      "--config", str(config), "--format", fmt,
                                      "--lang", lang])
    assert result.exit_code == 0, result.output
    return result.stdout


@pytest.mark.realdata
def test_verl_and_vllm_combined_are_the_sums_and_keep_their_own_prs(
    shared_data: Path, tmp_path: Path
) -> None:
    both = json.loads(_real(shared_data, tmp_path, VERL, VLLM))
    alone = {repo: json.loads(_real(shared_data, tmp_path, repo)) for repo in (VERL, VLLM)}
    assert alone[VERL]["counts"]["total"] == 28  # the seed report's week
    for field in ("total", "key", "merged", "closed", "opened"):
        assert both["counts"][field] == sum(alone[r]["counts"][field] for r in (VERL, VLLM))
    assert [(r["name"], r["counts"]) for r in both["repositories"]] == [
        (repo, alone[repo]["counts"]) for repo in (VERL, VLLM)]
    for part, repo in zip(both["parts"], (VERL, VLLM), strict=True):
        assert part["repository"] == repo
        assert {p["number"] for p in part["pulls"]} == {p["number"] for p in alone[repo]["pulls"]}
        assert all(f"github.com/{repo}/pull/" in p["url"] for p in part["pulls"])
        assert [k["number"] for k in part["key_pulls"]] == [
            k["number"] for k in alone[repo]["key_pulls"]]
    npu = sum(next((t["count"] for t in alone[r]["topics"] if t["name"] == "npu"), 0)
              for r in (VERL, VLLM))
    assert next(t["count"] for t in both["topics"] if t["name"] == "npu") == npu


@pytest.mark.realdata
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_real_combined_chat_digest_fits_and_names_both(
    shared_data: Path, tmp_path: Path, lang: str
) -> None:
    from bot.render.chat import BUDGET, visible_length

    text = _real(shared_data, tmp_path, VERL, VLLM, fmt="text", lang=lang)
    assert visible_length(text) <= BUDGET
    assert f"{VERL}#" in text and f"{VLLM}#" in text
