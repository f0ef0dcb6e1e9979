"""The verl week-29 digest reproduces every statistic the seed report states.

Expected values are the seed report's own (../shared/seeds): 28 PRs, bugfix first with
12, CI 8, NPU 12 at 43%, rollout among the busiest modules, hot file
vllm_async_server.py.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from bot.cli import app

pytestmark = pytest.mark.realdata

CONFIG = """
[repos."verl-project/verl"]
timezone = "Asia/Shanghai"
[repos."verl-project/verl".topics]
npu = { keywords = ["npu", "ascend"] }
"""


@pytest.fixture(scope="module")
def digest_json(shared_data: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    config = tmp_path_factory.mktemp("cfg") / "verl.toml"
    config.write_text(CONFIG)
    result = CliRunner().invoke(app, [
        "digest", "verl-project/verl", "--week", "2026-W29",
        "--snapshot", str(shared_data / "verl-2026-07.json"),
        "--config", str(config), "--format", "json", "--lang", "en",
    ])
    assert result.exit_code == 0, result.output
    return dict(json.loads(result.stdout))


def _count(items: list[dict[str, Any]], name: str) -> int:
    return next(i["count"] for i in items if i["name"] == name)


def test_pr_count(digest_json: dict[str, Any]) -> None:
    assert digest_json["counts"]["total"] == 28
    assert digest_json["counts"]["merged"] == 28


def test_key_pr_count(digest_json: dict[str, Any]) -> None:
    assert digest_json["counts"]["key"] == 24


def test_fixes_lead_with_twelve(digest_json: dict[str, Any]) -> None:
    assert digest_json["types"][0]["name"] == "fix"
    assert digest_json["types"][0]["count"] == 12


def test_ci_count(digest_json: dict[str, Any]) -> None:
    assert _count(digest_json["topics"], "ci") == 8


def test_npu_count_and_share(digest_json: dict[str, Any]) -> None:
    npu = next(t for t in digest_json["topics"] if t["name"] == "npu")
    assert npu["count"] == 12
    assert round(npu["share"] * 100) == 43


def test_rollout_among_the_busiest_modules(digest_json: dict[str, Any]) -> None:
    top = [t["name"] for t in digest_json["topics"][:3]]
    assert top == ["npu", "ci", "rollout"]
    assert _count(digest_json["topics"], "rollout") == 5


def test_hot_file(digest_json: dict[str, Any]) -> None:
    hot = digest_json["hot_files"][0]
    assert hot["path"].endswith("vllm_async_server.py")
    assert hot["pulls"] == 5


def test_json_follows_the_digest_contract(digest_json: dict[str, Any]) -> None:
    contract = {"repository", "week", "period", "counts", "topics", "types", "hot_files",
                "themes", "risks", "key_pulls", "suggestions"}
    assert contract <= set(digest_json)
    assert set(digest_json["period"]) == {"since", "until"}
    assert {"total", "key", "merged", "closed", "opened"} == set(digest_json["counts"])
    for risk in digest_json["risks"]:
        assert {"pull", "severity", "summary", "evidence_url"} <= set(risk)
    for key in digest_json["key_pulls"]:
        assert {"number", "title", "summary"} <= set(key)
    for theme in digest_json["themes"]:
        assert {"title", "pulls"} <= set(theme)


def test_unknown_review_data_is_said_not_guessed(digest_json: dict[str, Any]) -> None:
    assert all(r["resolution"] == "unknown" for r in digest_json["risks"])
    assert not any(r["kind"] == "unapproved" for r in digest_json["risks"])
    assert any("not recorded" in note for note in digest_json["notes"])
