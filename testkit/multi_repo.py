"""Two repositories' weeks for the tests of digests that span several: the example
snapshot (acme/lumen) and acme/prism, which has PRs numbered like lumen's (#1201 to
#1206, other changes) and two of its own (#2001, #2002)."""

from __future__ import annotations

from typing import Any

import msgspec

from bot.config import Config, parse_config
from bot.models import PullRequest, Snapshot
from testkit.server_support import example_snapshot

LUMEN = "acme/lumen"
PRISM = "acme/prism"
WEEK = "2026-W29"
SHARED_NUMBERS = (1201, 1202, 1203, 1204, 1205, 1206)
PRISM_ONLY = {1207: 2001, 1208: 2002}


def _moved(pull: PullRequest, number: int) -> PullRequest:
    return msgspec.structs.replace(
        pull, number=number, title=f"{pull.title} (prism)",
        url=f"https://github.com/{PRISM}/pull/{number}")


def prism_snapshot() -> Snapshot:
    lumen = example_snapshot()
    pulls = [_moved(p, p.number) for p in lumen.pulls if p.number in SHARED_NUMBERS]
    pulls += [_moved(p, PRISM_ONLY[p.number]) for p in lumen.pulls if p.number in PRISM_ONLY]
    return msgspec.structs.replace(lumen, repository=PRISM, pulls=tuple(pulls))


def two_repo_config(*channels: dict[str, Any]) -> Config:
    topics = {"npu": {"keywords": ["npu", "ascend"]}}
    return parse_config({
        "repos": {LUMEN: {"topics": topics}, PRISM: {"topics": topics}},
        "server": {"public_url": "https://reports.example.com"},
        "channels": list(channels) or [
            {"platform": "slack", "id": "C1", "repos": [LUMEN, PRISM], "lang": "en"}],
    })
