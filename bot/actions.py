"""What a button does when clicked: a chat command, carried in the button itself.

A button that acts (a PR's risks, follow a topic, the week before) is the command a
user could have typed, written into the button's data (Slack's `value`, Telegram's
`callback_data`, Feishu's `value`). A click is then answered by the same handler,
under the same rules (who may change settings, which repositories a chat may read),
as the typed command: the data is untrusted text, and the worst a forged one can do
is what typing could. Nothing is stored per button, so a click on a month-old digest
still works on any replica.

The data is a compact JSON array tagged with a version; the clicker's language is
not in it (it is the clicker's, not the poster's). Telegram allows 64 bytes of
callback data, the smallest of the platforms: a command that does not fit gets no
button (`encode_action` returns None) rather than a truncated one.

The tag also says where the click's answer goes, since only the message that lays
the button out knows what it is: `pd1`, a new message beneath the one clicked (a
digest's or a merged-PR notice's buttons: records a team keeps); `pd1r` - one byte
more - the answer replaces the message clicked (another view of the PR an answer is
about: its summary turned into its risks and back). The layout chooses
(`bot.render.layouts`), the click's answer follows it (`bot.chat.clicks.place_answer`).
A button made before `pd1r` existed answers beneath, as every button did then.
"""

from __future__ import annotations

from typing import get_args

import msgspec

from bot.models import Command, CommandKind, Lang

# Telegram's limit on `callback_data`, the smallest of the three platforms'.
MAX_ACTION_BYTES = 64

_TAG = "pd1"
# The same format, on a button whose answer replaces the message it is on.
_TAG_IN_PLACE = "pd1r"
_KINDS = frozenset(get_args(CommandKind))
_MAX_TOPICS = 4

# [tag, kind, repo, pull, week, topics, value]; trailing empty fields are left out.
_Fields = tuple[str | int | list[str], ...]


def encode_action(command: Command, *, in_place: bool = False,
                  limit: int = MAX_ACTION_BYTES) -> str | None:
    """The button data that runs `command` when clicked, its answer replacing the
    message clicked when `in_place`; None when it does not fit."""
    fields: list[str | int | list[str]] = [
        _TAG_IN_PLACE if in_place else _TAG, command.kind, command.repo or "",
        command.pull or 0, command.week or "", list(command.topics), command.value,
    ]
    while len(fields) > 2 and fields[-1] in ("", 0, []):
        fields.pop()
    data = msgspec.json.encode(fields).decode()
    return data if len(data.encode()) <= limit else None


def answers_in_place(data: str) -> bool:
    """Whether a button's data is a well-formed action whose answer replaces the
    message clicked (`pd1r`)."""
    read = _read(data, lang="en")
    return read is not None and read[0] == _TAG_IN_PLACE


def decode_action(data: str, *, lang: Lang) -> Command | None:
    """The command a button's data names, in the clicker's language; None for data
    that is not a well-formed action of ours (never raises)."""
    read = _read(data, lang=lang)
    return None if read is None else read[1]


def _read(data: str, *, lang: Lang) -> tuple[str, Command] | None:
    """The tag and command of well-formed action data, else None."""
    if not data or len(data.encode()) > MAX_ACTION_BYTES * 4:
        return None
    try:
        fields = msgspec.json.decode(data.encode(), type=list[str | int | list[str]])
    except (msgspec.DecodeError, ValueError):
        return None
    fields += [""] * (7 - len(fields))
    tag, kind, repo, pull, week, topics, value = fields[:7]
    if (len(fields) > 7 or tag not in (_TAG, _TAG_IN_PLACE) or not isinstance(kind, str)
            or kind not in _KINDS):
        return None
    pull = pull or 0
    topics = topics or []
    if not (isinstance(repo, str) and isinstance(pull, int) and isinstance(week, str)
            and isinstance(topics, list) and isinstance(value, str)):
        return None
    if not 0 <= pull < 2**31 or len(topics) > _MAX_TOPICS:
        return None
    return str(tag), Command(kind=kind, lang=lang, repo=repo or None,  # type: ignore[arg-type]
                        pull=pull or None, week=week or None, topics=tuple(topics),
                        value=value)
