"""The answers the model must give, as msgspec Structs: the same type makes the JSON
Schema sent in `response_format` and decodes (and validates) what comes back."""

from __future__ import annotations

from typing import Any, Literal

import msgspec

ResponseMode = Literal["json_schema", "json_object"]


class Answer(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """Base of every answer: no field may be missing or extra (OpenAI's strict mode)."""


class Sentence(Answer, frozen=True, kw_only=True):
    """One narrated sentence and the PRs it speaks of."""

    text: str
    pulls: list[int]


class RiskNote(Answer, frozen=True, kw_only=True):
    """A risk of the PR, paraphrased; `index` is its position in the PR's risk list."""

    index: int
    text: str


class PullNarration(Answer, frozen=True, kw_only=True):
    """The map step's answer for one PR."""

    title: str
    summary: str
    area: str
    risks: list[RiskNote]


class WeekNarration(Answer, frozen=True, kw_only=True):
    """The reduce step's answer for the week: the sections written as prose."""

    summary: list[Sentence]
    changes: list[Sentence]
    trends: list[Sentence]
    suggestions: list[Sentence]


def response_format(kind: type[Answer], mode: ResponseMode) -> dict[str, Any]:
    """`response_format` for a request expecting `kind`."""
    if mode == "json_object":
        return {"type": "json_object"}
    return {"type": "json_schema",
            "json_schema": {"name": kind.__name__, "strict": True, "schema": schema(kind)}}


def schema(kind: type[Answer]) -> dict[str, Any]:
    """`kind`'s JSON Schema with its definitions inlined (some endpoints refuse `$ref`)."""
    raw = msgspec.json.schema(kind)
    defs: dict[str, Any] = raw.pop("$defs", {})

    def inline(node: Any) -> Any:
        if isinstance(node, dict):
            ref = node.get("$ref")
            if isinstance(ref, str):
                return inline(defs[ref.rsplit("/", 1)[-1]])
            return {k: inline(v) for k, v in node.items()
                    if not (k == "title" and isinstance(v, str))}
        if isinstance(node, list):
            return [inline(v) for v in node]
        return node

    return dict(inline(raw))
