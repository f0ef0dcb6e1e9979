"""A message's blocks packed into as few messages as a platform's limits allow.

The encoder groups blocks into units that stay together (a part's divider, its heading
and first text); units go into a message in order while it keeps to `max_blocks`
blocks and `max_chars` of text (as `size` measures a block), and a unit too big for a
message of its own goes block by block. No message ends with a block `trailing` names
(a divider left with nothing under it).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TypeVar

B = TypeVar("B")


def pack(units: Sequence[Sequence[B]], *, max_blocks: int, max_chars: int,
         size: Callable[[B], int], trailing: Callable[[B], bool] = lambda block: False
         ) -> list[list[B]]:
    """`units` packed into messages under both limits, in reading order."""
    messages: list[list[B]] = []
    current: list[B] = []
    chars = 0
    for unit in units:
        unit_size = sum(size(b) for b in unit)
        if current and (len(current) + len(unit) > max_blocks or chars + unit_size > max_chars):
            messages.append(current)
            current, chars = [], 0
        if len(unit) > max_blocks or unit_size > max_chars:
            # A unit bigger than a message on its own goes block by block.
            for block in unit:
                block_size = size(block)
                if current and (len(current) + 1 > max_blocks
                                or chars + block_size > max_chars):
                    messages.append(current)
                    current, chars = [], 0
                current.append(block)
                chars += block_size
            continue
        current.extend(unit)
        chars += unit_size
    if current:
        messages.append(current)
    while messages and messages[-1] and trailing(messages[-1][-1]):
        messages[-1].pop()
    return [m for m in messages if m]
