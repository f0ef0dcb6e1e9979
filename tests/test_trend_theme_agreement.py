"""The trends and the themes agree on an area's size: a topic the trends name never
counts fewer PRs than the theme of the same name holds (vllm W29 said "模型（11 个）"
in the trends above a 模型 theme of 28 PRs), and where a topic counts more (its PRs
also sit under other themes) the trends say why. Read on the real weeks as
`prdigest digest` prints them; the Digest JSON `topics` keep their meaning."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from bot.config import load_config
from bot.engine import build_digest
from bot.snapshot import read_snapshot
from testkit import EXAMPLES
from testkit.cli import CONFIG, real_week

_HEADING = re.compile(r"^• (?P<area>[^：:]+)[：:](?P<kinds>.+)$", re.M)
_TOPICS = {"zh": re.compile(r"改动最频繁的主题是 (?P<list>.+?)(?:；|。)"),
           "en": re.compile(r"The busiest topics were (?P<list>.+?)(?:; |\.(?: |$))")}
_TOPIC = {"zh": re.compile(r"(?:^|、|和)(?P<name>[^、（]+?)（(?P<count>\d+) 个，占"),
          "en": re.compile(r"(?:^|, | and )(?P<name>[^,(]+?) \((?P<count>\d+), [\d.]+%\)")}
_WHY = {"zh": "涉及多个主题的 PR 各计一次", "en": "a PR on several topics counts in each"}
WEEKS = [("verl-project/verl", "verl-2026-07.json", ["--config", CONFIG]),
         ("verl-project/verl", "verl-2026-07.json", []),
         ("vllm-project/vllm", "vllm-2026-W29.json", [])]


def _digest(shared_data: Path, repo: str, file: str, extra: list[str], fmt: str,
            lang: str) -> str:
    return real_week(shared_data, repo, file, fmt, lang, *extra)


@pytest.mark.realdata
@pytest.mark.parametrize("lang", ["zh", "en"])
@pytest.mark.parametrize("repo, file, extra", WEEKS)
def test_a_topic_in_the_trends_counts_at_least_its_theme(
    shared_data: Path, repo: str, file: str, extra: list[str], lang: str
) -> None:
    text = _digest(shared_data, repo, file, extra, "text", lang)
    themes = {h["area"]: sum(int(n) for n in re.findall(r"\d+", h["kinds"]))
              for h in _HEADING.finditer(text)}
    said = _TOPICS[lang].search(text)
    assert said, text
    topics = {t["name"]: int(t["count"]) for t in _TOPIC[lang].finditer(said["list"])}
    assert len(topics) == 3, said["list"]
    shared = set(topics) & set(themes)
    assert shared, (topics, themes)
    for name in shared:
        assert topics[name] >= themes[name], f"{name}: trends {topics[name]}, theme {themes[name]}"
    if any(topics[name] > themes[name] for name in shared):
        assert _WHY[lang] in text


@pytest.mark.realdata
@pytest.mark.parametrize("repo, file, extra", WEEKS)
def test_every_theme_is_counted_in_the_topics_it_is_named_by(
    shared_data: Path, repo: str, file: str, extra: list[str]
) -> None:
    digest = json.loads(_digest(shared_data, repo, file, extra, "json", "en"))
    areas = {a["name"]: set(a["pulls"]) for a in digest["areas"]}
    # Dependency updates and branch syncs are no topic's work (they are counted apart).
    routine = {p["number"] for p in digest["pulls"] if p.get("sync")} | {
        n for t in digest["themes"] if t["kind"] == "dependencies" for n in t["others"]}
    tagged = {t["name"]: set(t["pulls"]) - routine for t in digest["topics"]}
    for theme in digest["themes"]:
        if theme["topic"]:
            members = set(theme["pulls"]) | set(theme["others"])
            assert members <= areas[theme["topic"]], theme["title"]
            assert tagged.get(theme["topic"], set()) <= areas[theme["topic"]]
    assert not routine & {n for a in areas.values() for n in a}


@pytest.mark.parametrize("focus", [(), ("checkpoint",)])
def test_the_counted_topics_hold_their_themes_and_keep_the_focus_first(
        focus: tuple[str, ...]) -> None:
    snapshot = read_snapshot(EXAMPLES / "snapshot.json")
    repo = load_config(EXAMPLES / "prdigest.toml").repo(snapshot.repository)
    digest = build_digest(snapshot, "2026-W29", repo_config=repo, lang="en",
                          focus_topics=focus)
    areas = {a.name: a for a in digest.areas}
    routine = {p.number for p in digest.pulls if p.sync} | {
        n for t in digest.themes if t.kind == "dependencies" for n in t.others}
    assert routine, "the example week has a dependency update"
    for topic in digest.topics:
        work = set(topic.pulls) - routine
        assert not work or work <= set(areas[topic.name].pulls)
        assert not routine & set(areas[topic.name].pulls if topic.name in areas else ())
    for theme in digest.themes:
        if theme.topic:
            assert {*theme.pulls, *theme.others} <= set(areas[theme.topic].pulls)
    counts = [a.count for a in digest.areas if a.name not in focus]
    assert counts == sorted(counts, reverse=True)
    if focus:
        assert digest.areas[0].name == focus[0]
