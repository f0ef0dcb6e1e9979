"""Why a PR is key: a score made of named parts, so every ranking can be explained."""

from __future__ import annotations

import math
import re

import msgspec

from bot.engine.classify import Classification
from bot.i18n import Translator
from bot.models import PullRequest, Risk

ROUTINE_TYPES = frozenset({"chore", "docs", "style", "ci", "test", "build"})
ROUTINE_MAX_LINES = 10
# A security fix is read first, whatever its size.
SECURITY_WEIGHT = 4.0
_TYPE_WEIGHT = {"feat": 3.0, "fix": 2.5, "perf": 2.5, "revert": 2.0, "refactor": 1.0}
_SEVERE = re.compile(
    r"\b(crash\w*|oom|out of memory|blow-?up|explod\w*|leak\w*|race|corrupt\w*|deadlock\w*|"
    r"hang\w*|nan|segfault\w*|data loss|security|vulnerab\w*)\b", re.I,
)


class Score(msgspec.Struct, frozen=True, kw_only=True):
    value: float
    key: bool
    reasons: tuple[str, ...]


def is_routine(cls: Classification, pull: PullRequest, risks: list[Risk]) -> bool:
    """Small maintenance with no risk is counted, but not key."""
    return (cls.type in ROUTINE_TYPES and pull.lines_changed <= ROUTINE_MAX_LINES and not risks
            and not cls.security)


def score_pull(
    pull: PullRequest,
    cls: Classification,
    risks: list[Risk],
    figures: tuple[str, ...],
    t: Translator,
    *,
    focus_topics: tuple[str, ...] = (),
) -> Score:
    """Type, size, severity words, figures, review depth, risks and focus topics."""
    value = 0.0
    reasons: list[str] = []
    if cls.breaking:
        value += 5
        reasons.append(t("breaking change"))
    if cls.security:
        value += SECURITY_WEIGHT
        reasons.append(t("security fix"))
    weight = _TYPE_WEIGHT.get(cls.type, 0.5)
    value += weight
    type_reason = {"feat": t("new feature"), "fix": t("bug fix"), "perf": t("performance")}
    if cls.type in type_reason:
        reasons.append(type_reason[cls.type])
    lines = pull.lines_changed
    value += min(3.0, math.log10(lines + 1))
    if lines >= 300:
        files = len(pull.files) or pull.changed_files or 0
        reasons.append(t("large change (%(lines)d lines in %(files)d files)", lines=lines,
                         files=files))
    severe = _SEVERE.search(pull.title) or (cls.type == "fix" and _SEVERE.search(pull.body or ""))
    if severe:
        value += 1.5
        reasons.append(t("severe symptom (%(word)s)", word=severe.group(0).lower()))
    if figures:
        value += 1.0
        reasons.append(t("measured effect (%(figures)s)", figures=t.sep.join(figures)))
    discussion = len(pull.review_threads or ()) + len(pull.comments or ()) + len(
        [r for r in pull.reviews or () if r.body]
    )
    if discussion:
        value += min(2.0, 0.5 * discussion)
        reasons.append(t.n("%(num)d review discussion", "%(num)d review discussions",
                           discussion))
    if risks:
        value += min(2.0, float(len(risks)))
        reasons.append(t.n("%(num)d risk", "%(num)d risks", len(risks)))
    focused = [topic for topic in cls.topics if topic in focus_topics]
    if focused:
        value += 2.0
        reasons.append(t("on your topics (%(topics)s)", topics=t.sep.join(focused)))
    key = pull.state == "merged" and not is_routine(cls, pull, risks)
    return Score(value=round(value, 3), key=key, reasons=tuple(reasons))
