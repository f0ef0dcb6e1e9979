"""Chinese as the digest writes it: no space between Chinese words, one between
Chinese and Latin text ("新增 `save_lora_only` 检查点支持")."""

from __future__ import annotations

import re

HAN = re.compile(r"[\u3400-\u9fff]")
_CJK_PUNCT = re.compile(r"[\u3000-\u303f\uff00-\uffef“”‘’]")


def _space_between(left: str, right: str) -> bool:
    """Chinese is written without spaces, with one between Chinese and Latin text."""
    if _CJK_PUNCT.match(left) or _CJK_PUNCT.match(right):
        return False
    return not (HAN.match(left) and HAN.match(right))


def join_words(pieces: list[str]) -> str:
    """Pieces of a line joined as Chinese is written: `新增 save_lora_only 检查点支持`."""
    out = ""
    for piece in pieces:
        piece = piece.strip()
        if not piece:
            continue
        if out and _space_between(out[-1], piece[0]):
            out += " "
        out += piece
    return out


def tidy(text: str) -> str:
    return join_words(text.split(" "))


def starts_in_chinese(text: str) -> bool:
    return bool(text) and bool(HAN.match(text[0]))


