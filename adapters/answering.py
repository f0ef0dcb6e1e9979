"""A question taken from a platform and answered: the steps every adapter goes through
between its own parsing and its own calls.

`take` admits a question through the shared `Inbox` (once across the platform's
retries and the replicas) and begins its answer in the background, so the delivery is
acknowledged at once. `answer` lets the inbox answer it and puts each reply where it
belongs (`bot.chat.clicks.place_answer`: in place of the message clicked, or beneath)
through the platform's two calls; a reply its renderer fails on goes as the
`internal-error` reply, and one the platform did not take is logged, never raised.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Coroutine, Sequence
from typing import Any, TypeVar

from adapters.background import Background
from adapters.base import DeliveryError
from bot.chat.clicks import place_answer
from bot.chat.inbound import Inbox, Question, render_or_error
from bot.models import Admission, Reply

logger = logging.getLogger(__name__)

M = TypeVar("M")


async def admit(inbox: Inbox, question: Question) -> Admission:
    """The inbox's admission of `question`, for the platform's acknowledgment; one held
    by another process is logged (the platform is asked to send it again)."""
    admission = await inbox.admit(question)
    if admission == "later":
        logger.info("%s delivery %s is held by another process; asked to send it again",
                    question.platform, question.delivery_key)
    return admission


async def take(inbox: Inbox, question: Question, tasks: Background,
               answer: Callable[[Question], Coroutine[Any, Any, None]]) -> Admission:
    """Admit `question` and, when this process is to answer it, begin `answer(question)`
    in `tasks`; the admission, for the platform's acknowledgment."""
    admission = await admit(inbox, question)
    if admission == "answer":
        tasks.spawn(answer(question))
    return admission


async def answer(inbox: Inbox, question: Question, names: tuple[str, ...],
                 render: Callable[[Reply], list[M]], *,
                 replace: Callable[[M], Awaitable[object]],
                 add: Callable[[Sequence[M]], Awaitable[object]],
                 admitted: bool = True) -> None:
    """The inbox's answer to `question` (once per delivery), rendered and sent: `replace`
    puts one message in place of the one clicked, `add` sends messages; what the
    platform refuses (`DeliveryError`) is logged."""
    async def send(reply: Reply) -> None:
        await place_answer(question.action, reply,
                           render_or_error(render, reply, question.platform),
                           replace=replace, add=add, refused=(DeliveryError,))

    try:
        await inbox.answer(question, names, send=send, admitted=admitted)
    except DeliveryError as exc:
        logger.warning("answer to %s %s not delivered: %s", question.platform,
                       question.channel_id, exc)
