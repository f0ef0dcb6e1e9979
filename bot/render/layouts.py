"""Digest and Reply -> `Document`: the one layout every chat platform encodes.

The chat form's budget is applied here, once (`chat_view`); the words come from
`templates/document/*.j2` (the shared sentences of `common/` and `text/` in the
document markup); the buttons - what a reader most likely does next - are laid out
here too, each a chat command (`bot.actions`) or a link. A reply kind's layout is a
function registered with `layout_for`: a new kind is one function (and its words),
and every platform encodes it without a change of its own.

Where a click's answer goes is decided here, once (`answers_in_place`): a button
that shows another view of what an answer shows - a PR's summary turning into its
risks and back - replaces that answer; every other click is answered beneath. A
digest or a merged-PR notice is a record a team keeps (`is_record`), so nothing
replaces it; a click that does something (follow a topic, mute) is confirmed beneath,
so a topics list stays there for the next click. The buttons carry that choice in
their data (`bot.actions`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable
from typing import Any

from bot.actions import encode_action
from bot.i18n import translator
from bot.models import Command, Digest, Lang, Reply, Risk
from bot.render.chat import chat_view
from bot.render.document import (
    HEADING,
    MARKUP,
    Block,
    Button,
    Buttons,
    Context,
    Divider,
    Document,
    Facts,
    Items,
    Paragraph,
    Tone,
    parse_blocks,
    parse_line,
    plain,
)
from bot.render.markup import is_web_url, markup_for
from bot.render.memo import reply_memo
from bot.render.templating import environment
from bot.render.typeset import typeset
from bot.render.view import DigestView
from bot.week import shift_week

ReplyLayout = Callable[[Reply], Document]

# Risk buttons under a digest: the first key PRs with risks.
DIGEST_RISK_BUTTONS = 3
# Topics a topics reply offers to follow or unfollow with a button.
TOPIC_BUTTONS = 4
_PLAIN = markup_for("text")
# Replies shown to the asker only where the platform allows (Slack's ephemeral).
PRIVATE_KINDS = frozenset({"help", "error"})

_LAYOUTS: dict[str, ReplyLayout] = {}


def layout_for(kind: str) -> Callable[[ReplyLayout], ReplyLayout]:
    """Registers the layout of the replies of `kind` (replacing any before it)."""
    def register(layout: ReplyLayout) -> ReplyLayout:
        _LAYOUTS[kind] = layout
        reply_document.cache_clear()  # type: ignore[attr-defined]
        return layout
    return register


class Words:
    """The macros of one document template, called by name: `w("title", x)` is the text
    of macro `title(x)`, typeset for the language."""

    def __init__(self, name: str, lang: Lang, **context: Any) -> None:
        template = environment(lang).get_template(name)
        self.lang = lang
        self._module = template.make_module(
            {"m": MARKUP, "heading_mark": HEADING, **context})

    def __call__(self, macro: str, *args: Any) -> str:
        return typeset(str(getattr(self._module, macro)(*args)).strip(), self.lang)

    def blocks(self, macro: str, *args: Any) -> tuple[Block, ...]:
        return parse_blocks(self(macro, *args))

    def line_text(self, macro: str, *args: Any) -> str:
        """A macro's text as plain words (a title, a label, a notification)."""
        return " ".join(plain(parse_line(self(macro, *args))).split())


def worst(risks: Iterable[Risk]) -> Tone:
    severities = {risk.severity for risk in risks}
    for severity in ("high", "medium", "low"):
        if severity in severities:
            return severity
    return "clear"


def is_record(kind: str, mode: str = "") -> bool:
    """Whether a message is a record a team keeps - a digest, merged-PR notices - whose
    buttons are answered beneath it, rather than an answer the next one replaces."""
    return kind in ("digest", "notices") or (kind == "pull" and mode == "merged")


# Commands that show a PR another way: on an answer about that PR, their answer
# takes its place.
PULL_VIEWS = ("risks", "summary")


def answers_in_place(command: Command, on: Reply | None) -> bool:
    """Whether the answer to `command`, clicked on the reply `on` (None: a digest),
    replaces `on`: only another view of the PR an answer (not a record) is about."""
    if on is None or is_record(on.kind, on.mode) or on.pull is None:
        return False
    return command.kind in PULL_VIEWS and command.pull == on.pull.number


def _action(label: str, command: Command, *, on: Reply | None = None,
            primary: bool = False) -> Button | None:
    """A button running `command` on the reply `on` (None: a digest), its answer in
    place or beneath as `answers_in_place` says; None when its data does not fit a
    button."""
    data = encode_action(command, in_place=answers_in_place(command, on))
    return Button(label=label, action=data, primary=primary) if data else None


def _link(label: str, url: str, *, primary: bool = False) -> Button | None:
    return Button(label=label, url=url.strip(), primary=primary) if is_web_url(url) else None


def _buttons(buttons: Iterable[Button | None]) -> tuple[Block, ...]:
    shown = tuple(b for b in buttons if b is not None)
    return (Buttons(shown),) if shown else ()


# --- digest -------------------------------------------------------------------------


def digest_document(digest: Digest) -> Document:
    """The chat digest: its header facts, each section of the chat view under a
    divider, the caveats after the summary, then its buttons (the full report, the
    week before, the risks of the key PRs that have some)."""
    view = chat_view(digest)
    w = Words("document/digest.j2", digest.lang, v=view, d=digest)
    blocks: list[Block] = []
    for section in view.sections:
        if section.heading is None:  # the header: where the full report is, its facts
            if blocks and not view.compact:
                blocks.append(Divider())
            blocks.extend(w.blocks("reports"))  # the report's address right under the title
            if not view.compact:
                blocks.append(Facts(tuple(
                    (label, parse_line(value)) for label, value in
                    (line.split("\t", 1) for line in w("facts").split("\n") if "\t" in line))))
            continue
        if blocks and not view.compact:  # the compact form runs on without rules
            blocks.append(Divider())
        body = w.blocks("section", section)
        blocks.extend(_with_pull_buttons(w, view, body) if section.id == "key_prs" else body)
        if section.id == "summary" and digest.notes:
            blocks.append(Context((parse_line(w("caveats")),)))
    blocks.extend(_buttons(_digest_buttons(w, view)))
    return Document(
        kind="digest", lang=digest.lang, title=w("title", _PLAIN), headline=True,
        notification=w.line_text("notification"), subtitle=w("period"),
        tone=worst(view.all_risks), blocks=tuple(blocks), part_title=w("part_title"),
        colon=translator(digest.lang)(": "))


def _with_pull_buttons(w: Words, view: DigestView, blocks: tuple[Block, ...]
                       ) -> tuple[Block, ...]:
    """The key PRs' items, each with a button to its PR: one list per repository, in
    the order the view names them (a list of another length is left as it is); under a
    repository's name a PR goes without the repository, its button too."""
    lists = iter(view.each)
    out: list[Block] = []
    for block in blocks:
        part = next(lists, None) if isinstance(block, Items) else None
        if isinstance(block, Items) and part is not None and len(block.items) == len(part.quick):
            block = Items(tuple(
                dataclasses.replace(item, button=_link(
                    w("pull_button", f"#{k.number}"), k.url or part.url(k.number)))
                for item, k in zip(block.items, part.quick, strict=True)), block.ordered)
        out.append(block)
    return tuple(out)


def _digest_buttons(w: Words, view: DigestView) -> list[Button | None]:
    digest = view.d
    buttons: list[Button | None] = []
    repo = None if view.parts else digest.repository
    try:
        before = shift_week(digest.week, -1)
    except ValueError:
        before = ""
    if before:
        buttons.append(_action(w("week_before_button"),
                               Command(kind="digest", repo=repo, week=before)))
    risky = [(part, k) for part in view.each for k in part.quick
             if any(r.pull == k.number for r in part.d.risks)][:DIGEST_RISK_BUTTONS]
    buttons += [_action(w("risks_button", f"{part.scope}#{k.number}"),
                        Command(kind="risks", repo=part.scope or digest.repository,
                                pull=k.number))
                for part, k in risky]
    return buttons + [_link(w("report_button", name), url, primary=True)
                      for name, url in view.report_links]


# --- replies ------------------------------------------------------------------------

_TONES: dict[str, Tone] = {"help": "info", "topics": "info", "answer": "info",
                           "subscribed": "done", "unsubscribed": "done",
                           "settings": "done", "error": "quiet"}


def _reply_words(reply: Reply) -> Words:
    return Words("document/reply.j2", reply.lang, reply=reply, params=dict(reply.params))


def _subtitle(w: Words, names: Iterable[str]) -> str:
    listed = [name for name in dict.fromkeys(names) if name]
    return w("subtitle", listed) if listed else ""


def standard_reply(reply: Reply, *, tone: Tone | None = None, subtitle: str = "",
                   buttons: Iterable[Button | None] = ()) -> Document:
    """A reply's document from `templates/document/reply.j2`: its title, its body, a
    notification line (the body's first line where the template has none)."""
    w = _reply_words(reply)
    blocks = w.blocks("body", reply, dict(reply.params))
    notification = w.line_text("notification", reply)
    if not notification and blocks:
        notification = _first_line(blocks[0])
    scope = dict(reply.params).get("repository", "")
    return Document(
        kind=reply.kind, lang=reply.lang, title=w.line_text("title", reply),
        subtitle=subtitle or (_subtitle(w, scope.split(", ")) if scope else ""),
        tone=tone or _TONES.get(reply.kind, "info"), notification=notification,
        private=reply.kind in PRIVATE_KINDS,
        blocks=blocks + _buttons(buttons))


def _first_line(block: Block) -> str:
    from bot.render.document import Heading
    if isinstance(block, Heading):
        return plain(block.line)
    if isinstance(block, Paragraph) and block.lines:
        return plain(block.lines[0])
    if isinstance(block, Items) and block.items:
        return plain(block.items[0].line)
    return ""


def _pull_layout(reply: Reply) -> Document:
    """One PR: its summary, risks or merged notice. Buttons: open it, its other
    answer (risks for a summary, the summary for risks; both for a notice), follow
    its first topic the chat does not follow yet."""
    if reply.pull is None:
        raise ValueError("a pull reply without a pull answer")
    p = reply.pull
    w = _reply_words(reply)
    scope = dict(reply.params).get("scope", "") or p.repository
    buttons: list[Button | None] = [_link(w("open_pull", p.number), p.url, primary=True)]
    if reply.mode != "risks" and p.risks:
        buttons.append(_action(w("risks_button"),
                               Command(kind="risks", repo=scope, pull=p.number), on=reply))
    if reply.mode in ("risks", "merged"):
        buttons.append(_action(w("summary_button"),
                               Command(kind="summary", repo=scope, pull=p.number), on=reply))
    followed = set(reply.topics) if reply.mode == "merged" else set()
    topic = next((t for t in p.topics if t not in followed), None)
    if topic is not None:
        buttons.append(_action(w("follow_button", topic),
                               Command(kind="subscribe", topics=(topic,)), on=reply))
    if reply.mode == "merged":
        buttons.append(_mute_button(w, reply))
    return standard_reply(reply, tone=worst(p.risks), subtitle=p.repository,
                          buttons=buttons)


def _mute_button(w: Words, reply: Reply) -> Button | None:
    """A merged-PR notice's last button: the chat's notices muted for a day, as `mute 1d`
    typed (those who may not change the chat's settings are refused politely)."""
    return _action(w("mute_button"), Command(kind="mute", value="1d"), on=reply)


def _notices_layout(reply: Reply) -> Document:
    """Several merged-PR notices in one message; the only button mutes them for a day."""
    pulls = [n.pull for n in reply.notices if n.pull is not None]
    w = _reply_words(reply)
    return standard_reply(reply, tone=worst(r for p in pulls for r in p.risks),
                          subtitle=_subtitle(w, (p.repository for p in pulls)),
                          buttons=[_mute_button(w, reply)])


def _topics_layout(reply: Reply) -> Document:
    """The topics the chat follows (a button to unfollow each) and those it can follow
    (a button to follow each), the first few of each."""
    w = _reply_words(reply)
    more = [t for t in reply.available_topics if t not in reply.topics]
    buttons = [_action(w("follow_button", t), Command(kind="subscribe", topics=(t,)),
                       on=reply)
               for t in more[:TOPIC_BUTTONS]]
    buttons += [_action(w("unfollow_button", t), Command(kind="unsubscribe", topics=(t,)),
                        on=reply)
                for t in reply.topics[:TOPIC_BUTTONS]]
    return standard_reply(reply, buttons=buttons)


def _subscribed_layout(reply: Reply) -> Document:
    w = _reply_words(reply)
    return standard_reply(reply, buttons=[
        _action(w("unfollow_button", t), Command(kind="unsubscribe", topics=(t,)), on=reply)
        for t in reply.topics[:TOPIC_BUTTONS]])


for _kind, _layout in (("pull", _pull_layout), ("notices", _notices_layout),
                       ("topics", _topics_layout), ("subscribed", _subscribed_layout)):
    _LAYOUTS[_kind] = _layout


def _reply_document(reply: Reply) -> Document:
    """Any reply's document: a digest's for a digest reply, the registered layout of
    its kind, else the standard one (title and body from `document/reply.j2`)."""
    if reply.kind == "digest":
        if reply.digest is None:
            raise ValueError("a digest reply without a digest")
        return digest_document(reply.digest)
    return _LAYOUTS.get(reply.kind, standard_reply)(reply)


reply_document = reply_memo(_reply_document)
