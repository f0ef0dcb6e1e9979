"""What Slack refuses in a message: its Block Kit limits, checked the way Slack does
(`invalid_blocks`, `msg_blocks_too_long`), for the fake Slack and the render tests."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

# Slack's limits, from https://docs.slack.dev/reference/block-kit/blocks and the
# observed cumulative limit behind `msg_blocks_too_long` (bolt-js #2509).
MAX_BLOCKS = 50
MAX_SECTION_TEXT = 3000
MAX_FIELD_TEXT = 2000
MAX_FIELDS = 10
MAX_HEADER_TEXT = 150
MAX_CONTEXT_ELEMENTS = 10
MAX_ACTIONS_ELEMENTS = 25
MAX_BUTTON_TEXT = 75
MAX_MESSAGE_TEXT = 40_000
MAX_CUMULATIVE_BLOCK_TEXT = 12_000


def slack_length(text: str) -> int:
    """Characters as Slack counts them (UTF-16 code units)."""
    return len(text.encode("utf-16-le")) // 2


def block_texts(value: Any) -> Iterator[str]:
    """Every `text` in a block structure."""
    if isinstance(value, dict):
        for key, item in value.items():
            if key == "text" and isinstance(item, str):
                yield item
            else:
                yield from block_texts(item)
    elif isinstance(value, list):
        for item in value:
            yield from block_texts(item)


def block_errors(blocks: Any) -> list[str]:
    """What Slack would reject in `blocks`, as readable reasons (empty when valid)."""
    if not isinstance(blocks, list):
        return ["blocks must be a list"]
    errors: list[str] = []
    if len(blocks) > MAX_BLOCKS:
        errors.append(f"{len(blocks)} blocks, more than {MAX_BLOCKS}")
    for index, block in enumerate(blocks):
        where = f"blocks[{index}]"
        kind = block.get("type") if isinstance(block, dict) else None
        if kind == "section":
            text = block.get("text", {}).get("text", "")
            if slack_length(text) > MAX_SECTION_TEXT:
                errors.append(f"{where}.text: {slack_length(text)} characters")
            fields = block.get("fields", [])
            if len(fields) > MAX_FIELDS:
                errors.append(f"{where}.fields: {len(fields)} fields")
            errors += [f"{where}.fields: {slack_length(f['text'])} characters"
                       for f in fields if slack_length(f.get("text", "")) > MAX_FIELD_TEXT]
            if not text and not fields:
                errors.append(f"{where}: a section needs text or fields")
        elif kind == "header":
            text = block.get("text", {})
            if (text.get("type") != "plain_text"
                    or slack_length(text.get("text", "")) > MAX_HEADER_TEXT):
                errors.append(f"{where}: header must be plain_text of at most {MAX_HEADER_TEXT}")
        elif kind == "context":
            elements = block.get("elements", [])
            if not 1 <= len(elements) <= MAX_CONTEXT_ELEMENTS:
                errors.append(f"{where}: {len(elements)} context elements")
            errors += [f"{where}: context text {slack_length(e.get('text', ''))} characters"
                       for e in elements if slack_length(e.get("text", "")) > MAX_SECTION_TEXT]
        elif kind == "actions":
            elements = block.get("elements", [])
            if not 1 <= len(elements) <= MAX_ACTIONS_ELEMENTS:
                errors.append(f"{where}: {len(elements)} actions")
        elif kind != "divider":
            errors.append(f"{where}: unexpected block type {kind!r}")
        for button in _buttons(block):
            if slack_length(button.get("text", {}).get("text", "")) > MAX_BUTTON_TEXT:
                errors.append(f"{where}: button text too long")
    return errors


def _buttons(block: Any) -> Iterator[dict[str, Any]]:
    if not isinstance(block, dict):
        return
    candidates = [block.get("accessory"), *block.get("elements", [])]
    for item in candidates:
        if isinstance(item, dict) and item.get("type") == "button":
            yield item


def message_problems(payload: dict[str, Any]) -> list[str]:
    """Everything Slack would refuse in a message payload (`text` + `blocks`)."""
    blocks = payload.get("blocks") or []
    problems = block_errors(blocks)
    total = sum(slack_length(t) for t in block_texts(blocks))
    if total > MAX_CUMULATIVE_BLOCK_TEXT:
        problems.append(f"{total} characters of block text (msg_blocks_too_long)")
    if slack_length(str(payload.get("text") or "")) > MAX_MESSAGE_TEXT:
        problems.append("text longer than Slack keeps")
    return problems
