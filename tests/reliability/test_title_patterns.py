"""A title pattern from the config never freezes the service: `exclude.titles` runs
under RE2, in time linear in the title, so `(a+)+$` - minutes per title under Python's
`re` - costs nothing while a merge webhook and a digest run; a pattern RE2 cannot run
in linear time is refused at load, naming the field."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.config import parse_config
from bot.errors import ConfigError
from testkit.reliability.names import REPO
from testkit.reliability.slow_patterns import WORST_TITLE, pattern_under_load

SLOWEST_PROBE_SECONDS = 0.5
"""Far above an in-process /healthz (milliseconds), far below one backtracking match."""


async def test_a_backtracking_pattern_leaves_the_webhook_digest_and_healthz_unaffected(
        redis_url: str, tmp_path: Path) -> None:
    outcome = await pattern_under_load(redis_url, tmp_path)
    assert outcome.webhook_status == 200
    assert outcome.notified == 1, outcome  # the PR is kept: its title ends in "!"
    assert outcome.digest_pulls > 0
    assert len(WORST_TITLE) == 40
    assert outcome.probes and outcome.probe_failures == 0, outcome
    assert outcome.slowest_probe < SLOWEST_PROBE_SECONDS, outcome
    assert outcome.webhook_seconds < 5 and outcome.digest_seconds < 5, outcome


@pytest.mark.parametrize("pattern", [r"(a)\1", "(?=wip)", "(?<!x)y", "[", r"\Z"])
@pytest.mark.parametrize("where", ["repo", "channel"])
def test_a_pattern_without_a_linear_time_match_is_refused_by_field(pattern: str, where: str
                                                                   ) -> None:
    repo: dict[str, object] = {}
    channel: dict[str, object] = {"platform": "slack", "id": "C1", "repo": REPO}
    (repo if where == "repo" else channel)["exclude"] = {"titles": ["^ok$", pattern]}
    with pytest.raises(ConfigError) as caught:
        parse_config({"repos": {REPO: repo}, "channels": [channel]})
    field = (f"repos.{REPO!r}.exclude.titles[1]" if where == "repo"
             else "channels[0].exclude.titles[1]")
    assert field in str(caught.value), caught.value
