"""`prdigest serve --snapshot A --snapshot B`: each repository's report comes from the file
that holds it, and the report index lists as links only the weeks the files can serve,
saying which they cannot."""

from __future__ import annotations

import os
import re
from collections.abc import AsyncIterator, Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
import msgspec
import pytest
from typer.testing import CliRunner

from bot.cli import app
from bot.snapshot import read_snapshot
from bot.source import SnapshotSource
from testkit import EXAMPLES
from testkit.multi_repo import prism_snapshot
from testkit.server_support import clear_env

Serve = Callable[..., Any]


@pytest.fixture
def serve(monkeypatch: pytest.MonkeyPatch) -> Serve:
    """`prdigest serve ARGS` up to the point it would listen: the app it built, or the
    CLI's result when it refused."""
    clear_env(monkeypatch)
    built: list[Any] = []
    monkeypatch.setattr("uvicorn.run", lambda server, **_: built.append(server))
    monkeypatch.setattr("bot.web.app.freeze_startup_heap", lambda: None)

    def run(*args: str) -> Any:
        result = CliRunner().invoke(app, ["serve", *args])
        return built.pop() if built else result

    return run


def _config(tmp_path: Path, *repos: str) -> str:
    path = tmp_path / "prdigest.toml"
    path.write_text("".join(f'[repos."{repo}"]\ntimezone = "Asia/Shanghai"\n' for repo in repos)
                    + '[server]\npublic_url = "http://localhost:8080"\n', encoding="utf-8")
    return str(path)


async def _get(server: Any, path: str) -> httpx.Response:
    transport = httpx.ASGITransport(app=server)
    async with httpx.AsyncClient(transport=transport, base_url="http://prdigest") as web:
        return await web.get(path)


def _title(page: httpx.Response) -> str:
    found = re.search(r"<title>(.*?)</title>", page.text, re.S)
    assert found is not None
    return found[1]


@pytest.fixture
def prism_file(tmp_path: Path) -> str:
    path = tmp_path / "prism.json"
    path.write_bytes(msgspec.json.encode(prism_snapshot()))
    return str(path)


async def test_two_snapshots_serve_each_repository_its_own_report(
        serve: Serve, tmp_path: Path, prism_file: str) -> None:
    config = _config(tmp_path, "acme/lumen", "acme/prism")
    # The files in the other order than the config lists the repositories.
    server = serve("--config", config, "--snapshot", prism_file,
                   "--snapshot", str(EXAMPLES / "snapshot.json"))
    lumen = await _get(server, "/reports/acme/lumen/2026-W29?lang=en")
    prism = await _get(server, "/reports/acme/prism/2026-W29?lang=en")
    assert lumen.status_code == prism.status_code == 200
    assert "acme/lumen" in _title(lumen) and "acme/prism" in _title(prism)
    # lumen's #1207 is prism's #2001.
    assert "/acme/lumen/pull/1207" in lumen.text and "/acme/prism/pull/2001" not in lumen.text
    assert "/acme/prism/pull/2001" in prism.text and "/acme/lumen/pull/1207" not in prism.text


@pytest.mark.realdata
async def test_verl_and_vllm_snapshots_serve_verl_its_own_week(
        serve: Serve, tmp_path: Path, shared_data: Path) -> None:
    config = _config(tmp_path, "verl-project/verl", "vllm-project/vllm")
    server = serve("--config", config, "--snapshot", str(shared_data / "verl-2026-07.json"),
                   "--snapshot", str(shared_data / "vllm-2026-W29.json"))
    verl = await _get(server, "/reports/verl-project/verl/2026-W29?lang=zh")
    vllm = await _get(server, "/reports/vllm-project/vllm/2026-W29?lang=zh")
    assert verl.status_code == vllm.status_code == 200
    assert "verl-project/verl" in _title(verl) and "vllm" not in _title(verl)
    assert "vllm-project/vllm" in _title(vllm)
    assert "github.com/verl-project/verl/pull/" in verl.text
    assert "github.com/vllm-project/vllm/pull/" not in verl.text


@pytest.mark.parametrize("case, why", [
    ("twice", "as another --snapshot does"),
    ("unlisted", "which is not under [repos]"),
])
def test_snapshots_that_cannot_be_told_apart_are_refused(
        serve: Serve, tmp_path: Path, prism_file: str, case: str, why: str) -> None:
    lumen = str(EXAMPLES / "snapshot.json")
    config = _config(tmp_path, "acme/lumen") if case == "unlisted" else _config(
        tmp_path, "acme/lumen", "acme/prism")
    second = prism_file if case == "unlisted" else lumen
    result = serve("--config", config, "--snapshot", lumen, "--snapshot", second)
    assert result.exit_code == 2 and why in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


@pytest.fixture
async def lumen_server(serve: Serve, tmp_path: Path) -> AsyncIterator[Any]:
    # The example snapshot, as if fetched on Sunday 2026-07-19 18:00 in Shanghai: its PRs
    # run from 2026-07-10 (W28) into W29, which the file holds up to that evening.
    snapshot = read_snapshot(EXAMPLES / "snapshot.json")
    path = tmp_path / "lumen.json"
    path.write_bytes(msgspec.json.encode(msgspec.structs.replace(
        snapshot, fetched_at=datetime(2026, 7, 19, 10, tzinfo=UTC))))
    yield serve("--config", _config(tmp_path, "acme/lumen"), "--snapshot", str(path))


def _rows(page: httpx.Response) -> dict[str, str]:
    """Each listed week and its table cell."""
    return {week: cell for cell, week in
            ((c, re.search(r"\d{4}-W\d\d", c)) for c in re.findall(r"<td>(.*?)</td>",
                                                                    page.text, re.S))
            if week for week in [week[0]]}


async def test_the_index_links_only_the_weeks_the_snapshot_holds(lumen_server: Any) -> None:
    page = await _get(lumen_server, "/reports/acme/lumen?lang=en")
    assert page.status_code == 200
    rows = _rows(page)
    assert list(rows)[:2] == ["2026-W29", "2026-W28"] and len(rows) == 8
    linked = [week for week, cell in rows.items() if "<a href" in cell]
    assert linked == ["2026-W29", "2026-W28"]
    for week, cell in rows.items():
        assert ("not in the snapshot" in cell) is (week not in linked)
    # The week the file ends in says so, rather than "in progress".
    assert "data until 2026-07-19" in rows["2026-W29"]
    assert "in progress" not in page.text
    assert "only the weeks they hold data for have a report" in page.text
    for week in linked:
        assert (await _get(lumen_server, f"/reports/acme/lumen/{week}?lang=en")
                ).status_code == 200


async def test_a_week_the_snapshot_does_not_hold_is_a_404_that_says_so(
        lumen_server: Any) -> None:
    page = await _get(lumen_server, "/reports/acme/lumen/2026-W26?lang=zh")
    assert page.status_code == 404
    assert "快照文件中没有这一周的数据" in page.text and "GitHub" not in page.text


def test_prdigest_snapshot_names_the_files_and_empty_means_github(
        serve: Serve, tmp_path: Path, prism_file: str, monkeypatch: pytest.MonkeyPatch) -> None:
    config = _config(tmp_path, "acme/lumen", "acme/prism")
    # Several files are separated as in PATH (`:`).
    monkeypatch.setenv("PRDIGEST_SNAPSHOT", os.pathsep.join([str(EXAMPLES / "snapshot.json"),
                                                           prism_file]))
    source = serve("--config", config).state.services.process.source
    assert isinstance(source, SnapshotSource)
    assert source.holds("acme/lumen") and source.holds("acme/prism")
    monkeypatch.setenv("PRDIGEST_SNAPSHOT", "")
    assert not isinstance(serve("--config", config).state.services.process.source, SnapshotSource)
