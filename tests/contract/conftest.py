"""Fixtures the contract suites share: the fake Slack and its secrets in the environment,
the fake Telegram, the example config, a Claims."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

import pytest
import pytest_asyncio

from bot.config import Config, load_config
from bot.models import Digest
from bot.store.claims import Claims
from bot.store.coordination import Coordination
from testkit import EXAMPLES
from testkit.coordination import claims_on
from testkit.fakes.slack import BOT_TOKEN, SIGNING_SECRET, FakeSlack
from testkit.fakes.telegram import FakeTelegram
from testkit.slack_http import OPEN_ADAPTERS


@pytest.fixture
def fake_slack() -> Iterator[FakeSlack]:
    with FakeSlack() as fake:
        yield fake


@pytest.fixture
def tg() -> Iterator[FakeTelegram]:
    """The fake Telegram Bot API."""
    with FakeTelegram() as fake:
        yield fake


@pytest.fixture
def slack_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """The bot token and signing secret of the fake Slack, and no app token (HTTP mode)."""
    monkeypatch.setenv("SLACK_BOT_TOKEN", BOT_TOKEN)
    monkeypatch.setenv("SLACK_SIGNING_SECRET", SIGNING_SECRET)
    monkeypatch.delenv("SLACK_APP_TOKEN", raising=False)


@pytest.fixture
def config() -> Config:
    return load_config(EXAMPLES / "prdigest.toml")


@pytest.fixture
def deduper(port: Coordination) -> Claims:
    """A process's Claims over the test's shared store."""
    return claims_on(port)


@pytest_asyncio.fixture(autouse=True, loop_scope="function")
async def close_slack_adapters() -> AsyncIterator[None]:
    """Slack adapters keep a connection pool; close each one a test made with
    `testkit.slack_http.make_adapter`."""
    yield
    while OPEN_ADAPTERS:
        await OPEN_ADAPTERS.pop().close()


@pytest.fixture
def small_messages(monkeypatch: pytest.MonkeyPatch) -> None:
    """Telegram's limit lowered so that the example digest takes two messages: how a
    digest in several parts is delivered, whatever the chat budget keeps it to."""
    from adapters.telegram import adapter as telegram_adapter
    from adapters.telegram import render as telegram_render
    from adapters.telegram.render import TelegramMessage, render_digest_messages
    from testkit.telegram_bot import SMALL_MESSAGES

    def small(weekly: Digest, *, limit: int = SMALL_MESSAGES) -> list[TelegramMessage]:
        return render_digest_messages(weekly, limit=min(limit, SMALL_MESSAGES))

    monkeypatch.setattr(telegram_adapter, "render_digest_messages", small)
    monkeypatch.setattr(telegram_render, "render_digest_messages", small)
