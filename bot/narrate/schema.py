"""The answers the model must give, as msgspec Structs: the same type makes the JSON
Schema sent in `response_format` and decodes (and validates) what comes back.

Real endpoints wrap their JSON: a reasoning model's `<think>…</think>` first, a
"```json" fence, a sentence of prose around it, or the whole answer inside one wrapper
object (`{"result": {...}}`). `decode` finds the object in all of these; fields the
schema does not name are ignored. What still does not fit is `SchemaError`, that
call's failure (never an outage of the endpoint).
"""

from __future__ import annotations

import contextlib
import json
import re
from typing import Any, Literal, TypeVar

import msgspec

ResponseMode = Literal["json_schema", "json_object_schema", "json_object"]
SHAPES: tuple[ResponseMode, ...] = ("json_schema", "json_object_schema", "json_object")
"""The ways of asking for JSON, most exact first: an endpoint that refuses one is asked
in the next (`bot.narrate.client`)."""


class Answer(msgspec.Struct, frozen=True, kw_only=True):
    """Base of every answer: every field required (OpenAI's strict mode); fields the
    model adds are ignored when decoding."""


A = TypeVar("A", bound=Answer)


class Sentence(Answer, frozen=True, kw_only=True):
    """One narrated sentence and the PRs it speaks of."""

    text: str
    pulls: list[int]


class ThemeSentence(Answer, frozen=True, kw_only=True):
    """A sentence of "changes": the theme it is about (its `key`) and its PRs."""

    theme: str
    text: str
    pulls: list[int]


class SuggestionSentence(Answer, frozen=True, kw_only=True):
    """A suggestion reworded: `index` is the engine's suggestion it restates."""

    index: int
    text: str
    pulls: list[int]


class RiskNote(Answer, frozen=True, kw_only=True):
    """A risk of the PR, reworded; `index` is its position in the PR's risk list."""

    index: int
    text: str


class PullNarration(Answer, frozen=True, kw_only=True):
    """One PR's narration: the sentence that says it (blank where it was not asked
    for) and its risk lines. No title: a PR is always named by its own."""

    number: int
    summary: str
    risks: list[RiskNote]


class PullBatch(Answer, frozen=True, kw_only=True):
    """The answer for a batch of PRs."""

    pulls: list[PullNarration]


class WeekNarration(Answer, frozen=True, kw_only=True):
    """The week's answer: the sections written as prose."""

    summary: list[Sentence]
    changes: list[ThemeSentence]
    trends: list[Sentence]
    suggestions: list[SuggestionSentence]


class Verdict(Answer, frozen=True, kw_only=True):
    """The second pass's judgement of one sentence."""

    id: int
    supported: bool


class CheckAnswer(Answer, frozen=True, kw_only=True):
    verdicts: list[Verdict]


class SchemaError(Exception):
    """The content holds no JSON object of the expected shape."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


_THINK = re.compile(r"<(think|thinking|reasoning)>.*?(?:</\1>|$)", re.S | re.I)
_FENCE = re.compile(r"```(?:json|JSON)?\s*\n?(.*?)(?:```|$)", re.S)


def _objects(content: str) -> list[Any]:
    """The JSON objects in `content`, fenced ones first, then any found in the prose."""
    text = _THINK.sub("", content).strip()
    candidates = [m.group(1) for m in _FENCE.finditer(text)] + [text]
    found: list[Any] = []
    decoder = json.JSONDecoder()
    for candidate in candidates:
        start = candidate.find("{")
        while start != -1:
            try:
                value, _ = decoder.raw_decode(candidate, start)
            except json.JSONDecodeError:
                start = candidate.find("{", start + 1)
                continue
            if isinstance(value, dict):
                found.append(value)
                break
            start = candidate.find("{", start + 1)
        stripped = candidate.strip()
        if stripped.startswith("["):
            with contextlib.suppress(json.JSONDecodeError):
                found.append(json.loads(stripped))
    return found


def _fields(kind: type[Answer]) -> set[str]:
    return set(kind.__struct_fields__)


def _unwrapped(value: dict[str, Any], kind: type[Answer]) -> dict[str, Any]:
    """`{"answer": {...}}` -> `{...}` when only the inner object has the answer's fields."""
    wanted = _fields(kind)
    while wanted.isdisjoint(value) and len(value) == 1:
        inner = next(iter(value.values()))
        if not isinstance(inner, dict):
            break
        value = inner
    return value


def decode(content: str, kind: type[A]) -> A:
    """The answer of type `kind` in a model's content; `SchemaError` when there is none."""
    objects = _objects(content)
    if not objects:
        raise SchemaError("not-json")
    fields = list(kind.__struct_fields__)
    for value in objects:
        shapes: list[Any] = [_unwrapped(value, kind)] if isinstance(value, dict) else []
        if len(fields) == 1:
            # An answer of one list (a batch) given as that list, or as its one item.
            shapes += [{fields[0]: value}, {fields[0]: [value]}]
        for shape in shapes:
            try:
                return msgspec.convert(shape, kind, strict=False)
            except msgspec.ValidationError:
                continue
    raise SchemaError("schema")


def response_format(kind: type[Answer], mode: ResponseMode) -> dict[str, Any]:
    """`response_format` for a request expecting `kind`: the schema as OpenAI's
    `json_schema`, or inside JSON mode as llama.cpp-based servers take it, or JSON mode
    alone (the prompt then carries the shape)."""
    if mode == "json_object":
        return {"type": "json_object"}
    if mode == "json_object_schema":
        return {"type": "json_object", "schema": schema(kind, bounded=True)}
    return {"type": "json_schema",
            "json_schema": {"name": kind.__name__, "strict": True, "schema": schema(kind)}}


TEXT_CHARS = 240
"""A sentence's length at most (the verifier's, `bot.narrate.verify.MAX_CHARS`)."""
LIST_ITEMS = 24


def schema(kind: type[Answer], *, bounded: bool = False) -> dict[str, Any]:
    """`kind`'s JSON Schema with its definitions inlined (some endpoints refuse `$ref`),
    every object closed and every property required (OpenAI's strict mode). `bounded`
    adds `maxLength` to strings and `maxItems` to lists, which servers that build a
    grammar from the schema (llama.cpp) enforce while decoding, so a small model that
    rambles stops at a sentence; OpenAI's strict mode takes neither."""
    raw = msgspec.json.schema(kind)
    defs: dict[str, Any] = raw.pop("$defs", {})

    def inline(node: Any) -> Any:
        if isinstance(node, dict):
            ref = node.get("$ref")
            if isinstance(ref, str):
                return inline(defs[ref.rsplit("/", 1)[-1]])
            out = {k: inline(v) for k, v in node.items()
                   if not (k == "title" and isinstance(v, str))}
            if out.get("type") == "object":
                out["additionalProperties"] = False
                out["required"] = list(out.get("properties", {}))
            if bounded and out.get("type") == "string":
                out["maxLength"] = TEXT_CHARS
            if bounded and out.get("type") == "array":
                out["maxItems"] = LIST_ITEMS
            return out
        if isinstance(node, list):
            return [inline(v) for v in node]
        return node

    return dict(inline(raw))
