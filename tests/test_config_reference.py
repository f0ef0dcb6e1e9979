"""docs/configuration.md's reference names every key the config accepts, in the table of
its section, once; and every environment variable the service reads."""

from __future__ import annotations

import re

import msgspec
import pytest

from adapters.registry import PLATFORMS
from bot.config import (
    CacheConfig,
    ChannelConfig,
    ChatConfig,
    ExcludeRule,
    GitHubConfig,
    LLMConfig,
    RepoConfig,
    ServerConfig,
    TopicRule,
)
from testkit import ROOT
from testkit.environment import service_variables

CONFIGURATION = ROOT / "docs" / "configuration.md"

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
    ("`[chat]`", ChatConfig, ""),
)


def chapter(text: str, heading: str) -> str:
    """The text under a `## ` heading, up to the next one or the end."""
    start = text.index(f"\n## {heading}\n")
    end = text.find("\n## ", start + 1)
    return text[start:] if end < 0 else text[start:end]


def reference_tables(text: str) -> dict[str, list[str]]:
    """Each `### ` heading of the reference -> the keys in its table's first column."""
    tables: dict[str, list[str]] = {}
    for block in re.split(r"^### ", chapter(text, "Reference"), flags=re.M)[1:]:
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
    keys = documented(CONFIGURATION.read_text(), heading)
    fields = [f"{prefix}{field.name}" for field in msgspec.structs.fields(section)]
    assert [f for f in fields if f not in keys] == []
    assert [f for f in fields if keys.count(f) > 1] == []


def undocumented_variables(text: str) -> list[str]:
    """The variables the service reads that have no row in the environment's table."""
    named = service_variables() | {"PRDIGEST_SNAPSHOT", "PRDIGEST_HISTORY",
                                   "FORWARDED_ALLOW_IPS", "HTTPS_PROXY"}
    rows = "\n".join(line for line in chapter(text, "Environment variables").splitlines()
                     if line.startswith("| `"))
    return sorted(name for name in named if f"`{name}`" not in rows)


def test_every_environment_variable_is_in_the_table() -> None:
    assert undocumented_variables(CONFIGURATION.read_text()) == []


def test_the_checks_read_the_reference_they_guard() -> None:
    """A reference without a key's row is caught (the tables are parsed, not skipped)."""
    text = CONFIGURATION.read_text().replace("| `prefetch_hours` |", "| prefetch |")
    assert "prefetch_hours" not in documented(text, "`[server]`")
    assert "max_connections" in documented(text, "`[server]`")
    text = CONFIGURATION.read_text().replace("| `PRDIGEST_REPORT_SECRET` |", "| secret |")
    assert undocumented_variables(text) == ["PRDIGEST_REPORT_SECRET"]
