"""requirements.lock (what `make demo` and the Docker image install, hashes checked) holds
exactly the runtime pins of pyproject.toml, its extras' (`all`) included: change one
without `make lock` and this fails."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
_ENTRY = re.compile(r"^([A-Za-z0-9._-]+)==([^\s;\\]+)")


def _name(text: str) -> str:
    return re.sub(r"[-_.]+", "-", text).lower()


def lock_entries(text: str) -> dict[str, tuple[str, int]]:
    """{package: (version, hashes)} of a `--generate-hashes` lock file."""
    entries: dict[str, tuple[str, int]] = {}
    current: str | None = None
    for line in text.splitlines():
        match = _ENTRY.match(line)
        if match:
            current = _name(match[1])
            entries[current] = (match[2], 0)
        elif current is not None and line.strip().startswith("--hash=sha256:"):
            version, hashes = entries[current]
            entries[current] = (version, hashes + 1)
    return entries


def runtime_pins() -> dict[str, str]:
    """The core's pins and every extra's but the test tools'."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    extras = project["optional-dependencies"]
    requirements = [*project["dependencies"],
                    *(r for name, listed in extras.items() if name != "test" for r in listed
                      if not r.startswith("prdigest["))]
    pins = {}
    for requirement in requirements:
        name, _, version = requirement.partition("==")
        assert version, f"{requirement}: runtime dependencies are pinned exactly"
        pins[_name(name)] = version
    return pins


def test_every_runtime_pin_is_locked_at_its_version() -> None:
    entries = lock_entries((ROOT / "requirements.lock").read_text())
    locked = {name: version for name, (version, _) in entries.items()}
    assert {name: locked.get(name) for name in runtime_pins()} == runtime_pins()


def test_every_locked_package_carries_its_hashes() -> None:
    entries = lock_entries((ROOT / "requirements.lock").read_text())
    assert len(entries) > len(runtime_pins())  # the transitive dependencies too
    assert [name for name, (_, hashes) in entries.items() if hashes == 0] == []


def test_no_test_tool_is_in_the_runtime_lock() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    tools = {_name(r.partition("==")[0]) for r in project["optional-dependencies"]["test"]
             if not r.startswith("prdigest[")}
    assert tools.isdisjoint(lock_entries((ROOT / "requirements.lock").read_text()))


def test_the_lock_reader_sees_a_version_change() -> None:
    text = "msgspec==0.21.0 \\\n    --hash=sha256:00\n"
    assert lock_entries(text) == {"msgspec": ("0.21.0", 1)}
    assert lock_entries(text)["msgspec"][0] != runtime_pins()["msgspec"]


def test_the_extras_leave_the_sdks_out_of_the_core_and_all_has_them_all() -> None:
    """A Slack-only install (`prdigest[slack]`) carries no lark-oapi, openai or PTB; the
    image and `make demo` install `all`, which the lock holds."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    core = {_name(r.partition("==")[0]) for r in project["dependencies"]}
    sdks = {"slack-bolt", "slack-sdk", "python-telegram-bot", "lark-oapi", "openai", "babel",
            "aiohttp", "httpx"}
    assert core.isdisjoint(sdks)
    extras = project["optional-dependencies"]
    assert extras["all"] == ["prdigest[slack,telegram,feishu,llm]"]
    header = (ROOT / "requirements.lock").read_text().splitlines()[:2]
    assert "uv pip compile pyproject.toml --extra all --generate-hashes" in header[1]
