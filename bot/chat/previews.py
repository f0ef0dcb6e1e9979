"""A PR link pasted in a chat, previewed there: which links are PRs of the repositories
the chat follows, and what is shown of each.

What is shown is the answer `summary #N` and `risks for #N` give in that chat - the
engine's summary, topics and risks through `Digests.pull_answer`, the PR found as
`CommandHandler.lookup_pull` finds it - with who wrote it. A link to a repository the
chat does not follow is never looked up, so nothing of it (a private repository's title,
say) can reach a chat that does not follow it.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable
from dataclasses import dataclass

from bot.chat.handler import CommandHandler
from bot.config import ChannelConfig
from bot.errors import SourceError
from bot.models import Lang, PullAnswer, Reply
from bot.render.document import Document
from bot.render.previews import preview_document

log = logging.getLogger(__name__)

MAX_PREVIEWS = 5
"""PR links previewed per message at most: each may cost a GitHub call."""
MAX_LINKS_READ = 50
"""Links of one message read at most, followed or not."""

# https://github.com/owner/repo/pull/7035, its /files, /commits, ?w=1, #discussion_r1
_PULL_URL = re.compile(
    r"https?://(?:www\.)?github\.com/(?P<owner>[A-Za-z0-9](?:[A-Za-z0-9-]{0,38}))"
    r"/(?P<name>[A-Za-z0-9._-]{1,100})/pull/(?P<number>[1-9][0-9]{0,8})"
    r"(?:/[A-Za-z0-9/._-]*)?(?:\?[^#\s]*)?(?:#\S*)?",
    re.I,
)


@dataclass(frozen=True)
class PullLink:
    """A link to a PR: the address as pasted, the repository as the link writes it."""

    url: str
    repo: str
    number: int


def pull_link(url: str) -> PullLink | None:
    """The PR a whole address names, or None when it is not a GitHub PR page."""
    match = _PULL_URL.fullmatch(url.strip()) if len(url) <= 2048 else None
    if match is None:
        return None
    return PullLink(url=url, repo=f"{match['owner']}/{match['name']}",
                    number=int(match["number"]))


def followed_links(urls: Iterable[str], channel: ChannelConfig,
                   limit: int = MAX_PREVIEWS) -> list[tuple[PullLink, str]]:
    """The links among `urls` to PRs of `channel`'s repositories, each address once,
    the first `limit`, each with its repository as the channel names it; any other
    link is left out unread."""
    found: list[tuple[PullLink, str]] = []
    seen: set[str] = set()
    for index, url in enumerate(urls):
        if index >= MAX_LINKS_READ or len(found) >= limit:
            break
        link = pull_link(url)
        if link is None or url in seen:
            continue
        repo = next((name for name in channel.repositories
                     if name.lower() == link.repo.lower()), None)
        if repo is None:
            continue
        seen.add(url)
        found.append((link, repo))
    return found


@dataclass(frozen=True)
class PullPreview:
    """What a chat is shown of a pasted PR link: the chat's answer about the PR, who
    wrote it, and `scope` (the repository, in a chat of several; else "")."""

    link: PullLink
    answer: PullAnswer
    author: str | None
    scope: str = ""

    def document(self, lang: Lang) -> Document:
        """The preview laid out: the chat's `risks for #N` answer about the PR (its
        repository named in a chat of several), with who wrote it."""
        reply = Reply(kind="pull", lang=lang, pull=self.answer, mode="risks",
                      params=(("scope", self.scope),) if self.scope else ())
        return preview_document(reply, self.author)


class PullPreviews:
    """Previews of PR links for the chats of one handler's config in force."""

    def __init__(self, handler: CommandHandler) -> None:
        self.handler = handler

    async def channel(self, chat: str) -> ChannelConfig | None:
        """The channel `chat` (`slack:C0123`) is now, or None for a chat not set up."""
        return await self.handler.chat_channel(chat)

    async def shown(self, chat: str, urls: Iterable[str]) -> list[tuple[str, Document]]:
        """What `chat` (`<platform>:<id>`) is shown of the links among `urls`: each
        followed PR link's address and its preview, in the chat's language; nothing in
        a chat not set up (no link is looked up there)."""
        channel = await self.channel(chat)
        if channel is None:
            log.info("links in %s left alone: not a chat set up", chat)
            return []
        return [(preview.link.url, preview.document(channel.lang))
                for preview in await self.previews(channel, urls)]

    async def previews(self, channel: ChannelConfig, urls: Iterable[str],
                       lang: Lang | None = None) -> list[PullPreview]:
        """The previews of the followed PR links among `urls`, in the channel's
        language (or `lang`); a PR that is not found, or that GitHub cannot be asked
        about now, gets none (the log says why)."""
        shown: list[PullPreview] = []
        answers: dict[tuple[str, int], tuple[PullAnswer, str | None] | None] = {}
        for link, repo in followed_links(urls, channel):
            key = (repo, link.number)
            if key not in answers:
                answers[key] = await self._answer(channel, repo, link.number,
                                                  lang or channel.lang)
            found = answers[key]
            if found is not None:
                scope = dict(channel.pull_scope(repo)).get("scope", "")
                shown.append(PullPreview(link=link, answer=found[0], author=found[1],
                                         scope=scope))
        return shown

    async def _answer(self, channel: ChannelConfig, repo: str, number: int, lang: Lang
                      ) -> tuple[PullAnswer, str | None] | None:
        try:
            pull = await self.handler.lookup_pull(repo, number)
        except SourceError as exc:
            log.warning("PR %s#%s not previewed: source unavailable (%s)", repo, number, exc)
            return None
        if pull is None:
            log.info("PR %s#%s not previewed: not found", repo, number)
            return None
        answer = await self.handler.digests.pull_answer(pull, repo, lang, channel)
        return answer, pull.author
