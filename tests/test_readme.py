"""README.md's configuration reference names every key the config accepts, in the table
of its section, once; and every environment variable the service reads."""

from __future__ import annotations

import re

import msgspec
import pytest

from adapters.registry import PLATFORMS
from bot.config import (
    CacheConfig,
    ChannelConfig,
    ExcludeRule,
    GitHubConfig,
    LLMConfig,
    RepoConfig,
    ServerConfig,
    TopicRule,
)
from testkit import ROOT
from testkit.environment import service_variables

README = ROOT / "README.md"

# The reference's heading for each section, and the prefix its table writes keys with.
SECTIONS: tuple[tuple[str, type[msgspec.Struct], str], ...] = (
    ('`[repos."owner/name"]`', RepoConfig, ""),
    ('`[repos."owner/name".topics]`', TopicRule, ""),
    ("`exclude`", ExcludeRule, ""),
    ("`[[channels]]`", ChannelConfig, ""),
    ("`[github]`", GitHubConfig, ""),
    ("`[cache]`", CacheConfig, ""),
    ("`[server]`", ServerConfig, ""),
    # Every platform's settings, from the registry, in the one platforms table.
    *(("`[platforms.slack]`", spec.settings, f"{spec.name}.") for spec in PLATFORMS),
    ("`[llm]`", LLMConfig, ""),
)


def reference_tables(text: str) -> dict[str, list[str]]:
    """Each `### ` heading of the reference -> the keys in its table's first column."""
    start = text.index("## Configuration reference")
    end = text.index("\n## ", start + 1)
    tables: dict[str, list[str]] = {}
    for block in re.split(r"^### ", text[start:end], flags=re.M)[1:]:
        heading = block.splitlines()[0]
        tables[heading] = re.findall(r"^\| `([a-z_.]+)` \|", block, flags=re.M)
    return tables


def documented(text: str, heading: str) -> list[str]:
    return next((keys for title, keys in reference_tables(text).items()
                 if title.startswith(heading)), [])


@pytest.mark.parametrize(("heading", "section", "prefix"), SECTIONS,
                         ids=[f"{p}{s.__name__}" for _, s, p in SECTIONS])
def test_every_config_key_has_one_row_in_its_section(
        heading: str, section: type[msgspec.Struct], prefix: str) -> None:
    keys = documented(README.read_text(), heading)
    fields = [f"{prefix}{field.name}" for field in msgspec.structs.fields(section)]
    assert [f for f in fields if f not in keys] == []
    assert [f for f in fields if keys.count(f) > 1] == []


def test_every_environment_variable_is_in_the_table() -> None:
    named = service_variables() | {"PRDIGEST_SNAPSHOT", "PRDIGEST_HISTORY",
                                   "FORWARDED_ALLOW_IPS", "HTTPS_PROXY"}
    text = README.read_text()
    table = text[text.index("## Environment variables"):]
    table = table[:table.index("\n## ")]
    rows = "\n".join(line for line in table.splitlines() if line.startswith("| `"))
    assert sorted(name for name in named if f"`{name}`" not in rows) == []


def test_the_checks_read_the_reference_they_guard() -> None:
    """A README without a key's row is caught (the tables are parsed, not skipped)."""
    text = README.read_text().replace("| `prefetch_hours` |", "| prefetch |")
    assert "prefetch_hours" not in documented(text, "`[server]`")
    assert "max_connections" in documented(text, "`[server]`")
