"""Slack unfurls: a GitHub PR link pasted in a channel that follows its repository gets
a compact preview under the message (`link_shared` -> `chat.unfurl`): the PR linked
with its title and state, who wrote it, its type and topics, and its risks - the chat's
own `summary` / `risks for #N` answer (`bot.chat.previews`), worded as those are.

A link to a repository the channel does not follow, or posted where no channel is set
up (the message composer, a chat the bot does not serve), is left alone: no lookup, no
`chat.unfurl` call, so nothing of a private repository reaches a channel not following
it. Each delivery is unfurled once across Slack's retries and the replicas (the claims
questions use). Everything from GitHub is escaped as Slack mrkdwn in `verbatim` text,
so a title's `<!channel>` or `<@U1>` pings nobody and links nowhere.

Slack app settings this needs: the bot scopes `links:read` and `links:write`, the bot
event `link_shared`, and `github.com` among the app's unfurl domains.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from slack_sdk.errors import SlackApiError
from slack_sdk.models.blocks import ContextBlock, MarkdownTextObject, SectionBlock
from slack_sdk.web.async_client import AsyncWebClient

from adapters.slack import TEMPLATES
from adapters.slack.inbound import PLATFORM, delivery_key
from adapters.slack.markup import SlackMarkup
from adapters.slack.render import MAX_SECTION_CHARS, split_text
from bot.chat.inbound import FirstSeen
from bot.chat.previews import MAX_LINKS_READ, PullPreview, PullPreviews
from bot.logs import delivery
from bot.models import Admission, Lang, Reply
from bot.render import environment
from bot.render.typeset import typeset

logger = logging.getLogger(__name__)

RISKS_SHOWN = 3
"""Risks a preview lists; the rest are counted, with the command that lists them."""

_MRKDWN = SlackMarkup()


@dataclass(frozen=True)
class LinkShared:
    """A verified `link_shared` event: where the links were posted (`channel`, the
    message's `ts`), the addresses, and the delivery's key across Slack's retries."""

    channel: str
    ts: str
    urls: tuple[str, ...]
    key: str | None
    user: str | None = None


def _str(value: object) -> str | None:
    return value if isinstance(value, str) and value else None


def link_shared(body: Mapping[str, Any]) -> LinkShared | None:
    """The links of a verified Events API `link_shared` delivery, or None when it holds
    none or is not one."""
    event = body.get("event")
    if body.get("type") != "event_callback" or not isinstance(event, Mapping) \
            or event.get("type") != "link_shared":
        return None
    channel, ts = _str(event.get("channel")), _str(event.get("message_ts"))
    links = event.get("links")
    if channel is None or ts is None or not isinstance(links, list):
        return None
    urls = tuple(url for link in links[:MAX_LINKS_READ] if isinstance(link, Mapping)
                 and (url := _str(link.get("url"))) is not None)
    if not urls:
        return None
    return LinkShared(channel=channel, ts=ts, urls=urls, key=delivery_key(body),
                      user=_str(event.get("user")))


class _Words:
    """The macros of `slack/unfurl.j2` bound to one preview, called by name."""

    def __init__(self, preview: PullPreview, lang: Lang) -> None:
        reply = Reply(kind="pull", lang=lang, pull=preview.answer, mode="risks",
                      params=(("scope", preview.scope),) if preview.scope else ())
        template = environment(lang, (TEMPLATES,)).get_template("slack/unfurl.j2")
        self._lang = lang
        self._module = template.make_module({"m": _MRKDWN, "reply": reply,
                                             "author": preview.author or ""})

    def __call__(self, macro: str, *args: Any) -> str:
        return typeset(str(getattr(self._module, macro)(*args)).strip(), self._lang)


def _text(text: str) -> MarkdownTextObject:
    # verbatim: no `@channel`, `#name` or bare address in GitHub text becomes a mention
    # or a link; the templates' own links are explicit `<url|label>`.
    return MarkdownTextObject(text=text, verbatim=True)


def unfurl_blocks(preview: PullPreview, lang: Lang) -> list[dict[str, Any]]:
    """A preview's blocks: the PR's heading and facts, then its risks in small print."""
    w = _Words(preview, lang)
    head = "\n".join(part for part in (w("heading"), w("facts")) if part)
    blocks: list[dict[str, Any]] = [
        SectionBlock(text=_text(text)).to_dict()
        for text in split_text([head], MAX_SECTION_CHARS)[:1]]
    risks = split_text(w("risks", RISKS_SHOWN).split("\n"), MAX_SECTION_CHARS)[:1]
    blocks += [ContextBlock(elements=[_text(text)]).to_dict() for text in risks]
    return blocks


class SlackUnfurls:
    """Answers `link_shared` deliveries with `chat.unfurl`. `previews` None: the handler
    cannot look PRs up (a test's), and links are left alone."""

    def __init__(self, client: AsyncWebClient, previews: PullPreviews | None,
                 deduper: FirstSeen) -> None:
        self.client = client
        self.previews = previews
        self.deduper = deduper

    async def admit(self, shared: LinkShared) -> Admission:
        """Whether to unfurl this delivery: "answer" (this process holds it now),
        "repeat", or "later". A dedupe store that cannot be asked lets it through: a
        preview shown twice beats none."""
        if shared.key is None:
            return "answer"
        try:
            return await self.deduper.first(PLATFORM, shared.key)
        except Exception as exc:
            logger.warning("slack: dedupe unavailable (%s); unfurling %s anyway",
                           type(exc).__name__, shared.key)
            return "answer"

    async def unfurl(self, shared: LinkShared) -> None:
        """Preview the followed PR links of an admitted delivery; never raises (the
        log says what went wrong), and records the delivery answered once done."""
        with delivery(shared.key):
            sent = False
            try:
                await self._unfurl(shared)
                sent = True
            except SlackApiError as exc:
                logger.warning("slack: chat.unfurl in %s failed: %s", shared.channel,
                               exc.response.get("error"))
            except Exception:
                logger.exception("slack: previewing links in %s failed", shared.channel)
            await self._record(shared, sent=sent)

    async def _unfurl(self, shared: LinkShared) -> None:
        if self.previews is None:
            return
        channel = await self.previews.channel(f"{PLATFORM}:{shared.channel}")
        if channel is None:
            logger.info("slack: links in %s left alone: not a channel set up",
                        shared.channel)
            return
        previews = await self.previews.previews(channel, shared.urls)
        if not previews:
            return
        unfurls = {p.link.url: {"blocks": unfurl_blocks(p, channel.lang)} for p in previews}
        await self.client.chat_unfurl(channel=shared.channel, ts=shared.ts, unfurls=unfurls)
        logger.info("slack: %d PR link(s) unfurled in %s", len(unfurls), shared.channel)

    async def _record(self, shared: LinkShared, *, sent: bool) -> None:
        if shared.key is None:
            return
        try:
            if sent:
                await self.deduper.answered(PLATFORM, shared.key)
            else:
                await self.deduper.unanswered(PLATFORM, shared.key)
        except Exception as exc:
            logger.warning("slack: dedupe unavailable (%s) recording %s",
                           type(exc).__name__, shared.key)
