"""What a Feishu card must be: the card JSON 2.0 shapes this renderer uses."""

from __future__ import annotations

import re
from typing import Any

from adapters.feishu.render import (
    MAX_REQUEST_BYTES,
    card_content,
    request_bytes,
)

# Tags the renderer itself writes; everything else with `<` is a leak.
OWN_TAGS = re.compile(r"</?font(?: color='grey')?>")


def assert_valid(card: dict[str, Any]) -> None:
    """The shapes Feishu's card JSON 2.0 accepts, as this renderer uses them."""
    assert set(card) == {"schema", "config", "header", "body"}
    assert card["schema"] == "2.0"
    assert card["config"] == {"update_multi": True,
                              "summary": {"content": card["header"]["title"]["content"]}}
    assert set(card["header"]) <= {"title", "subtitle", "template"}
    assert card["header"]["title"]["tag"] == "plain_text"
    assert card["header"]["template"] in {"red", "orange", "blue", "green", "grey"}
    for element in card["body"]["elements"]:
        assert element["tag"] in {"markdown", "hr", "column_set"}
        if element["tag"] == "markdown":
            assert set(element) == {"tag", "content"} and element["content"].strip()
            assert OWN_TAGS.sub("", element["content"]).count("<") == 0, element["content"]
        if element["tag"] == "column_set":
            for column in element["columns"]:
                (button,) = column["elements"]
                assert button["tag"] == "button"
                assert button["type"] in {"default", "primary"}
                (behaviour,) = button["behaviors"]
                if behaviour["type"] == "callback":  # a command (bot.actions)
                    assert set(behaviour["value"]) == {"action"}
                    assert 0 < len(behaviour["value"]["action"].encode()) <= 64
                else:
                    assert behaviour["type"] == "open_url"
                    assert behaviour["default_url"].startswith("https://")
    assert request_bytes(card) <= MAX_REQUEST_BYTES
    assert "\x1e" not in card_content(card)
