"""One area however its PRs spell it: a module folder named after the project
(`hertzbeat-alerter`) is the module its titles name (`feat(alerter):`), and a plural
inside a name folds as one at its end does (`seatunnel-connectors-v2` is the
`[Connector-V2]` of its titles)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from bot.config import RepoConfig
from bot.engine import build_digest
from bot.engine.areas import fold
from bot.models import PullRequest, Snapshot
from testkit.pulls import merged_pull

MERGED = datetime(2026, 7, 15, 3, tzinfo=UTC)


@pytest.mark.parametrize(("one", "other"), [
    ("connectors-v2", "Connector-V2"), ("KV_Offloading", "kv-offload"),
    ("mcp-tools", "mcp_tool"), ("tests", "test")])
def test_spellings_of_one_name_fold_alike(one: str, other: str) -> None:
    assert fold(one) == fold(other)


@pytest.mark.parametrize(("one", "other"), [("status", "stat"), ("class", "cla"),
                                            ("connector-v2", "connector-v3")])
def test_other_names_stay_apart(one: str, other: str) -> None:
    assert fold(one) != fold(other)


def _pull(number: int, title: str, path: str) -> PullRequest:
    return merged_pull(number, title, (path,), lines=30, when=MERGED)


def test_a_module_folder_named_after_the_project_is_its_titles_module() -> None:
    pulls = (
        _pull(1, "feat(alerter): support the cloud monitor webhook",
              "hertzbeat-alerter/src/main/java/Webhook.java"),
        _pull(2, "fix: bound sms client failure details",
              "hertzbeat-alerter/src/main/java/Sms.java"),
        _pull(3, "[Improve][Connector-V2] ftp source reads many tables",
              "seatunnel-connectors-v2/connector-file/Ftp.java"),
        _pull(4, "[Feature][Connector-V2] sftp source reads many tables",
              "seatunnel-connectors-v2/connector-file/Sftp.java"),
    )
    digest = build_digest(Snapshot(repository="apache/hertzbeat", pulls=pulls[:2]),
                          "2026-W29", repo_config=RepoConfig(), lang="en")
    assert [t.title for t in digest.themes] == ["alerter"]
    digest = build_digest(Snapshot(repository="apache/seatunnel", pulls=pulls[2:]),
                          "2026-W29", repo_config=RepoConfig(), lang="en")
    assert [t.title for t in digest.themes] == ["connector-v2"]


def test_a_hidden_folder_of_the_teams_tools_is_no_part_of_the_project() -> None:
    pulls = (_pull(1, "fix: stop tokens for GLM-5.2", ".assist/skills/glm/SKILL.md"),
             _pull(2, "feat: review workflow", ".assist/commands/review.md"),
             _pull(3, "fix: launch config", ".vscode/launch.json"))
    digest = build_digest(Snapshot(repository="InternLM/xtuner", pulls=pulls), "2026-W29",
                          repo_config=RepoConfig(), lang="en")
    titles = {t.title for t in digest.themes}
    assert not any(title.startswith(".") for title in titles), titles
    assert "Build & environment" in titles, titles
