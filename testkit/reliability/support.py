"""The world the reliability tests and `bench/faults.py` run prdigest in.

Everything outside prdigest is a real server on 127.0.0.1:0 in its own thread: the
fake GitHub (PyGithub talks to it), the fake Slack, Telegram and Feishu (their real
SDKs talk to them), a private redis-server that can be killed and restarted on its
port, and - for "killed mid-post" - a proxy in front of a platform that can park one
request before or after the platform saw it. The service itself runs in-process
(`create_app` with this config) or as `prdigest serve` in a subprocess.

Also here: the hostile strings PR titles, bodies and review comments carry, and what
"a live mention" means on each platform, checked over every payload the fakes took.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections import Counter
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import httpx
import msgspec
import redis
from aiohttp import ClientSession, ClientTimeout, web

from bot.config import Config, load_config
from bot.models import PullRequest, Review, ReviewThread, ThreadComment
from bot.snapshot import read_snapshot
from bot.week import current_week, shift_week, week_period
from testkit import EXAMPLES
from testkit.fakes import slack as slack_fake
from testkit.fakes.aiohttp_server import ThreadedAiohttpServer
from testkit.fakes.feishu import FakeFeishu
from testkit.fakes.github import FakeGitHub
from testkit.fakes.github_fixtures import build_week, github_complete
from testkit.fakes.slack import FakeSlack
from testkit.fakes.telegram import FakeTelegram, parse_html
from testkit.redis_server import free_port

ROOT = Path(__file__).resolve().parents[2]
REPO = "acme/lumen"
PRIVATE_REPO = "acme/vault"
TZ = "Asia/Shanghai"
# Wednesday of 2026-W30 in Shanghai: the example snapshot's week, W29, is last week.
NOW = datetime(2026, 7, 22, 4, 0, tzinfo=UTC)
WEEK = "2026-W29"

SLACK_CHANNEL = "C0123456"
SLACK_VAULT_CHANNEL = "CVAULT001"
TELEGRAM_CHAT = "-1001234567890"
FEISHU_CHAT = "oc_0123456789abcdef"
SLACK_ADMIN = "U0ADMIN1"

# Every secret of a full configuration; tests search logs and answers for each value.
GITHUB_TOKEN = "ghp_reliability_TOKEN_9f8e7d6c5b4a"
SECRETS: dict[str, str] = {
    "GITHUB_TOKEN": GITHUB_TOKEN,
    "GITHUB_WEBHOOK_SECRET": "gh-webhook-SECRET-0a1b2c3d4e5f",
    "PRDIGEST_REPORT_SECRET": "report-SECRET-5f4e3d2c1b0a",
    "SLACK_BOT_TOKEN": slack_fake.BOT_TOKEN,
    "SLACK_SIGNING_SECRET": slack_fake.SIGNING_SECRET,
    "TELEGRAM_BOT_TOKEN": "987654:RELIABILITY-token_QwErTy",
    "TELEGRAM_WEBHOOK_SECRET": "tg-webhook-SECRET_77aa88bb",
    "FEISHU_APP_SECRET": "feishu-app-SECRET-1122334455",
    "FEISHU_VERIFICATION_TOKEN": "feishu-verify-TOKEN-6677",
    "FEISHU_ENCRYPT_KEY": "feishu-encrypt-KEY-8899aabb",
}

# --- hostile text ----------------------------------------------------------------------------

HOSTILE_PIECES = (
    "<!channel>", "<!here>", "<!everyone>", "<@U0ADMIN1>", "<#C0123456>", "@all", "@here",
    '<at user_id="all">all</at>', "<at id=all></at>", "<script>alert(1)</script>",
    '<img src=x onerror="alert(2)">', "[click](javascript:alert(3))",
    "[docs](tg://user?id=42)", "<https://evil.example|trusted link>", "**bold** _it_ ~~s~~",
    "\x1b[31mred\x1b[0m", "\u202eevil\u202c", "\x00nul\x07bell", "&amp; &lt;tag&gt;",
)
HOSTILE = " ".join(HOSTILE_PIECES)
HOSTILE_NUMBER = 1299


def hostile_pull(repo: str = REPO) -> PullRequest:
    """A key PR merged in WEEK whose title, body, reviews and review threads all carry
    every hostile piece, and whose open threads make it a risk (so its words are quoted)."""
    at = datetime(2026, 7, 16, 6, 0, tzinfo=UTC)
    comment = ThreadComment(author="mallory", body=f"critical: {HOSTILE}", created_at=at,
                            url=f"https://github.com/{repo}/pull/{HOSTILE_NUMBER}#r1")
    return github_complete(PullRequest(
        number=HOSTILE_NUMBER,
        title=f"[rollout] feat: {HOSTILE}",
        url=f"https://github.com/{repo}/pull/{HOSTILE_NUMBER}",
        author="mallory",
        state="merged",
        draft=False,
        created_at=at - timedelta(days=2),
        updated_at=at,
        merged_at=at,
        closed_at=at,
        base="main",
        labels=("breaking",),
        body=f"### What does this PR do?\n\n{HOSTILE}\n\nSpeeds up rollout 1.9-3.1x.",
        additions=4200,
        deletions=900,
        changed_files=3,
        files=(),
        reviews=(Review(author="reviewer", state="CHANGES_REQUESTED", submitted_at=at,
                        body=f"high: {HOSTILE}"),),
        review_threads=(ReviewThread(path="lumen/rollout/engine.py", line=10, resolved=False,
                                     outdated=False, comments=(comment,)),),
        comments=(),
        checks="failure",
    ))


def example_pulls(*, hostile: bool = True) -> list[PullRequest]:
    pulls = [github_complete(p) for p in read_snapshot(EXAMPLES / "snapshot.json").pulls]
    return [*pulls, hostile_pull()] if hostile else pulls


PRIVATE_TITLE = "vault-only-title-do-not-leak"


def private_pulls() -> list[PullRequest]:
    at = datetime(2026, 7, 15, 3, 0, tzinfo=UTC)
    return [github_complete(PullRequest(
        number=77, title=f"[core] feat: {PRIVATE_TITLE}",
        url=f"https://github.com/{PRIVATE_REPO}/pull/77", author="insider", state="merged",
        draft=False, created_at=at - timedelta(days=1), updated_at=at, merged_at=at,
        closed_at=at, base="main", labels=(), body="private body", additions=10,
        deletions=1, changed_files=1, files=(), reviews=(), review_threads=(), comments=(),
        checks="success"))]


# --- what counts as live ---------------------------------------------------------------------

# Slack mrkdwn: a special mention (<!channel>, <!here>, <!everyone>, <!subteam^..>), a user
# or channel mention (<@U..>, <#C..>) - anything `<!`, `<@`, `<#` - pings; so does any link
# whose target is not http(s) (a `javascript:` or `tg:` target, or one we did not make).
_SLACK_LIVE = re.compile(r"<[!@#]")
_SLACK_LINK = re.compile(r"<([^<>|]*)\|?[^<>]*>")
# Telegram HTML: a tg:// link mentions a user; an @name in the parsed text becomes a
# mention entity; a non-http(s) link target is a trick.
_TG_AT = re.compile(r"(?<![\w\u2060])@[A-Za-z0-9_]{3,}")
# Feishu card markdown: an <at ...> tag mentions (the cards' own <font> is not live).
_FEISHU_TAG = re.compile(r"<\s*at\b", re.I)
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\u202a-\u202e\u2066-\u2069]")
_MD_LINK = re.compile(r"\]\(\s*([^)\s]*)")


def _texts(value: Any) -> Iterator[str]:
    """Every string inside a JSON value."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, Mapping):
        for item in value.values():
            yield from _texts(item)
    elif isinstance(value, list):
        for item in value:
            yield from _texts(item)


def slack_live(payload: Mapping[str, Any]) -> list[str]:
    """What in one Slack message would notify or mislead: unescaped `<!..>`, `<@..>`,
    `<#..>`, a non-http(s) link target, `link_names` (which turns @here into a ping),
    or a control character."""
    found: list[str] = []
    if str(payload.get("link_names", "")).lower() in {"1", "true"}:
        found.append("link_names is on")
    blocks = payload.get("blocks")
    if isinstance(blocks, str):
        blocks = json.loads(blocks)
    for text in [str(payload.get("text") or ""), *_texts(blocks or [])]:
        found += [f"slack mention {m.group(0)!r} in {text[:80]!r}"
                  for m in _SLACK_LIVE.finditer(text)]
        for link in _SLACK_LINK.finditer(text):
            target = link.group(1)
            if not target.startswith(("http://", "https://")):
                found.append(f"slack link to {target!r}")
        found += [f"control character {c!r}" for c in _CONTROL.findall(text)]
    return found


def telegram_live(fields: Mapping[str, str]) -> list[str]:
    """What in one Telegram message would notify or mislead: a `tg://` or other
    non-http(s) link, an `@name` Telegram would turn into a mention, a tag Telegram
    refuses, or a control character."""
    text = fields.get("text", "")
    found: list[str] = []
    if fields.get("parse_mode") == "HTML":
        try:
            plain, entities = parse_html(text)
        except ValueError as exc:
            return [f"telegram markup refused: {exc}"]
        for entity in entities:
            url = str(entity.get("url", ""))
            if entity["type"] == "text_link" and not url.startswith(("http://", "https://")):
                found.append(f"telegram link to {url!r}")
    else:
        plain = text
    found += [f"telegram mention {m.group(0)!r}" for m in _TG_AT.finditer(plain)]
    found += [f"control character {c!r}" for c in _CONTROL.findall(plain)]
    markup = fields.get("reply_markup")
    if markup:
        for url in re.findall(r'"url":\s*"([^"]*)"', markup):
            if not url.startswith(("http://", "https://")):
                found.append(f"telegram button to {url!r}")
    return found


def feishu_live(card: Mapping[str, Any]) -> list[str]:
    """What in one Feishu card would notify or mislead: an `<at>` tag in any text, a
    link whose target is not http(s), or a control character."""
    found: list[str] = []
    for text in _texts(card):
        found += [f"feishu tag {m.group(0)!r} in {text[:80]!r}"
                  for m in _FEISHU_TAG.finditer(text)]
        for target in _MD_LINK.findall(text):
            if target and not target.startswith(("http://", "https://")):
                found.append(f"feishu link to {target!r}")
        found += [f"control character {c!r}" for c in _CONTROL.findall(text)]
    return found


_LIVE_TAGS = frozenset({"script", "at", "img", "iframe", "object", "embed", "frame", "form",
                        "input", "link", "meta", "base", "video", "audio"})


class _PageTags(HTMLParser):
    """Every real tag of a page (escaped text is data, not a tag)."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.found: list[str] = []
        self.text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in _LIVE_TAGS and not (tag in {"meta", "link"} and self._harmless(attrs)):
            self.found.append(f"html tag <{tag}>")
        for name, value in attrs:
            if name.startswith("on"):
                self.found.append(f"html handler {name}= on <{tag}>")
            if name in {"href", "src", "action", "xlink:href"} and value is not None and \
                    re.match(r"\s*(javascript|tg|data|vbscript):", value, re.I):
                self.found.append(f"html link {value!r} on <{tag}>")

    @staticmethod
    def _harmless(attrs: list[tuple[str, str | None]]) -> bool:
        """The page's own <meta charset> / viewport, not content from GitHub."""
        names = {name for name, _ in attrs}
        return bool(names & {"charset", "name"}) and "http-equiv" not in names

    def handle_data(self, data: str) -> None:
        self.text.append(data)


def html_live(page: str) -> list[str]:
    """What in a report page would run, mention or mislead: a script/at/img/... tag, an
    event-handler attribute, a javascript:/tg:/data: link, a control character."""
    parser = _PageTags()
    parser.feed(page)
    parser.close()
    found = parser.found
    found += [f"control character {c!r}" for c in _CONTROL.findall("".join(parser.text))]
    return found


# --- configuration ---------------------------------------------------------------------------


@dataclass
class Urls:
    github: str
    slack: str
    telegram: str
    feishu: str


def config_text(urls: Urls, *, schedule: str = "0 9 * * MON", catch_up_hours: float = 12,
                public_url: str = "http://localhost:8080", extra: str = "",
                report_requests_per_minute: int = 100_000) -> str:
    """The full configuration: both repositories, four channels (one per platform for
    the public repository, a Slack channel for the private one), every platform on.
    The report pages' rate limit is out of the way: these runs send pages by the
    hundred from one address."""
    return f"""
[repos."{REPO}"]
timezone = "{TZ}"
[repos."{REPO}".topics]
npu = {{ keywords = ["npu", "ascend", "hccl"], paths = ["**/npu/**"] }}
checkpoint = {{ keywords = ["checkpoint"], paths = ["lumen/checkpoint/**"] }}

[repos."{PRIVATE_REPO}"]
timezone = "{TZ}"
private = true

[[channels]]
platform = "slack"
id = "{SLACK_CHANNEL}"
repo = "{REPO}"
lang = "en"
schedule = "{schedule}"
timezone = "{TZ}"
topics = ["npu"]
admins = ["{SLACK_ADMIN}"]

[[channels]]
platform = "telegram"
id = "{TELEGRAM_CHAT}"
repo = "{REPO}"
lang = "en"
schedule = "{schedule}"
timezone = "{TZ}"

[[channels]]
platform = "feishu"
id = "{FEISHU_CHAT}"
repo = "{REPO}"
lang = "zh"
schedule = "{schedule}"
timezone = "{TZ}"

[[channels]]
platform = "slack"
id = "{SLACK_VAULT_CHANNEL}"
repo = "{PRIVATE_REPO}"
lang = "en"
schedule = "{schedule}"
timezone = "{TZ}"

[github]
api_url = "{urls.github}"
timeout_seconds = 1.0

[server]
public_url = "{public_url}"
catch_up_hours = {catch_up_hours}
report_requests_per_minute = {report_requests_per_minute}

[platforms.slack]
api_url = "{urls.slack}"

[platforms.telegram]
api_url = "{urls.telegram}"

[platforms.feishu]
domain = "{urls.feishu}"
{extra}
"""


def write_config(path: Path, urls: Urls, **options: Any) -> Config:
    path.write_text(config_text(urls, **options), encoding="utf-8")
    return load_config(path)


# --- the fakes, together -----------------------------------------------------------------------


@dataclass
class World:
    """The fakes one run talks to, and the environment that points prdigest at them."""

    github: FakeGitHub
    slack: FakeSlack
    telegram: FakeTelegram
    feishu: FakeFeishu
    feishu_app_id: str

    def urls(self) -> Urls:
        return Urls(github=self.github.base_url, slack=self.slack.base_url,
                    telegram=self.telegram.base_url, feishu=self.feishu.base_url)

    def env(self, redis_url: str | None = None) -> dict[str, str]:
        """The environment variables a full configuration reads."""
        values = dict(SECRETS, FEISHU_APP_ID=self.feishu_app_id)
        if redis_url:
            values["REDIS_URL"] = redis_url
        return values

    # -- what arrived --

    def slack_messages(self) -> list[dict[str, Any]]:
        """Every message Slack accepted: chat.postMessage and response_url answers."""
        return self.slack.posted("chat.postMessage") + self.slack.posted("response")

    def telegram_messages(self) -> list[dict[str, str]]:
        return self.telegram.sent()

    def feishu_cards(self) -> list[dict[str, Any]]:
        return [card.card for card in self.feishu.sent_cards()]

    def live_mentions(self) -> list[str]:
        """Every live mention, tag or trick in every payload any platform accepted."""
        found = [f"slack: {p}" for m in self.slack_messages() for p in slack_live(m)]
        found += [f"telegram: {p}" for m in self.telegram_messages() for p in telegram_live(m)]
        found += [f"feishu: {p}" for c in self.feishu_cards() for p in feishu_live(c)]
        return found

    def payload_count(self) -> int:
        return (len(self.slack_messages()) + len(self.telegram_messages())
                + len(self.feishu_cards()))


@contextlib.contextmanager
def world(*, pulls: list[PullRequest] | None = None,
          private: list[PullRequest] | None = None) -> Iterator[World]:
    """The four fakes, started; GitHub holds the example week (plus the hostile PR) and
    the private repository."""
    app_id = f"cli_{uuid.uuid4().hex[:16]}"  # lark-oapi caches tokens per app id
    with contextlib.ExitStack() as stack:
        github = stack.enter_context(FakeGitHub(token=GITHUB_TOKEN))
        github.add_repo(REPO, example_pulls() if pulls is None else pulls)
        github.add_repo(PRIVATE_REPO, private_pulls() if private is None else private,
                        private=True)
        slack = stack.enter_context(FakeSlack())
        telegram = stack.enter_context(FakeTelegram(token=SECRETS["TELEGRAM_BOT_TOKEN"]))
        feishu = stack.enter_context(FakeFeishu(app_id=app_id,
                                                app_secret=SECRETS["FEISHU_APP_SECRET"]))
        yield World(github=github, slack=slack, telegram=telegram, feishu=feishu,
                    feishu_app_id=app_id)


def now() -> datetime:
    return NOW


# --- a Redis that can die ----------------------------------------------------------------------


class KillableRedis:
    """A private redis-server on one port that can be SIGKILLed and started again there,
    with its append-only file (as docker-compose.yml runs it) so data survives."""

    def __init__(self, *, appendonly: bool = True) -> None:
        binary = shutil.which("redis-server")
        if binary is None:
            raise RuntimeError("redis-server is not installed")
        self.binary = binary
        self.port = free_port()
        self.appendonly = appendonly
        self.dir = tempfile.mkdtemp(prefix="prdigest-killable-redis-")
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> KillableRedis:
        args = [self.binary, "--port", str(self.port), "--bind", "127.0.0.1", "--save", "",
                "--dir", self.dir, "--appendonly", "yes" if self.appendonly else "no",
                "--appendfsync", "always"]
        self.process = subprocess.Popen(args, stdout=subprocess.DEVNULL,
                                        stderr=subprocess.DEVNULL)
        client = redis.Redis.from_url(self.url)
        deadline = time.monotonic() + 10
        try:
            while True:
                try:
                    client.ping()
                    return self
                except redis.ConnectionError:
                    if time.monotonic() > deadline or self.process.poll() is not None:
                        raise RuntimeError("redis-server did not start") from None
                    time.sleep(0.02)
        finally:
            client.close()

    def kill(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGKILL)
            self.process.wait(5)
        self.process = None

    def close(self) -> None:
        self.kill()
        shutil.rmtree(self.dir, ignore_errors=True)

    def __enter__(self) -> KillableRedis:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()


# --- a proxy that parks one request ----------------------------------------------------------


@dataclass
class Hold:
    """Which requests a `HoldingProxy` parks, and whether it has."""

    path_part: str
    when: str  # "before": the platform never sees it; "after": it did, the caller not
    count: int = 1  # how many matching requests it parks
    body_part: bytes = b""  # only requests whose body holds this (e.g. a channel id)
    parked: threading.Event = field(default_factory=threading.Event)  # all `count` are
    release: asyncio.Event | None = None
    taken: int = 0


class HoldingProxy(ThreadedAiohttpServer):
    """A reverse proxy on 127.0.0.1:0 in front of one fake platform.

    Requests and answers pass unchanged, except that after `hold(path_part, when)` the
    next request whose path contains `path_part` is parked: `when="before"` before it is
    forwarded (the platform never sees it: a post lost in flight), `when="after"` once
    the platform has answered (the platform holds the message, the caller never hears).
    `parked` is set while a request is held; `release()` lets it go - a "before" request
    whose caller has gone is dropped, as a broken connection would drop it.
    """

    thread_name = "holding-proxy"

    def __init__(self, upstream: str) -> None:
        super().__init__()
        parts = httpx.URL(upstream)
        self.upstream_origin = f"{parts.scheme}://{parts.host}:{parts.port}"
        # What follows the origin, exactly as given ("" for a bare origin).
        after_scheme = upstream.split("://", 1)[1]
        self.upstream_path = after_scheme[after_scheme.find("/"):] if "/" in after_scheme \
            else ""
        self.holds: list[Hold] = []
        self.forwarded = 0
        self._session: ClientSession | None = None

    @property
    def base_url(self) -> str:
        """The upstream base URL with this proxy's origin."""
        return f"http://127.0.0.1:{self.port}{self.upstream_path}"

    def __exit__(self, *exc: object) -> None:
        self.release()
        self.stop()

    async def on_start(self) -> None:
        self._session = ClientSession(timeout=ClientTimeout(total=30))

    async def on_stop(self) -> None:
        if self._session is not None:
            await self._session.close()

    def build_app(self) -> web.Application:
        app = web.Application(client_max_size=8 << 20)
        app.router.add_route("*", "/{tail:.*}", self._forward)
        return app

    def hold(self, path_part: str, when: str = "before", *, count: int = 1,
             body_part: bytes = b"") -> Hold:
        """Park the next `count` requests whose path contains `path_part` (and whose
        body contains `body_part`)."""
        hold = Hold(path_part, when, count=count, body_part=body_part)
        self.holds.append(hold)
        return hold

    def release(self) -> None:
        loop = self._loop
        if loop is None:
            return
        for hold in self.holds:
            if hold.release is not None:
                loop.call_soon_threadsafe(hold.release.set)
        self.holds = []

    def _take_hold(self, path: str, body: bytes) -> Hold | None:
        for hold in self.holds:
            if hold.path_part in path and hold.body_part in body and \
                    hold.taken < hold.count:
                hold.taken += 1
                if hold.release is None:
                    hold.release = asyncio.Event()
                return hold
        return None

    async def _forward(self, request: web.Request) -> web.StreamResponse:
        body = await request.read()
        hold = self._take_hold(request.path, body)
        if hold is not None:
            assert hold.release is not None
            if hold.when == "before":
                if hold.taken == hold.count:
                    hold.parked.set()
                await hold.release.wait()
                raise web.HTTPBadGateway(text="dropped in flight")
        assert self._session is not None
        headers = {k: v for k, v in request.headers.items()
                   if k.lower() not in {"host", "content-length", "transfer-encoding"}}
        async with self._session.request(
            request.method, f"{self.upstream_origin}{request.path_qs}", data=body,
            headers=headers,
        ) as answer:
            payload = await answer.read()
            status = answer.status
            out_headers = {k: v for k, v in answer.headers.items()
                           if k.lower() not in {"content-length", "transfer-encoding",
                                                "content-encoding", "connection"}}
        self.forwarded += 1
        if hold is not None and hold.when == "after":
            assert hold.release is not None
            if hold.taken == hold.count:
                hold.parked.set()  # the platform has it; its answer waits here
            await hold.release.wait()
        return web.Response(body=payload, status=status, headers=out_headers)


# --- prdigest serve in a subprocess ------------------------------------------------------------


class ServeProcess:
    """`prdigest serve` as an operator runs it, on a free port, logging to a file;
    `runner=True` runs it through `testkit.reliability.serve_runner` (short slot locks)."""

    def __init__(self, config: Path, env: Mapping[str, str], log: Path,
                 *, log_level: str = "info", runner: bool = False) -> None:
        self.config = config
        self.env = {k: v for k, v in os.environ.items()
                    if not k.startswith(("SLACK_", "TELEGRAM_", "FEISHU_", "GITHUB_",
                                         "REDIS_", "PRDIGEST_"))}
        self.env.update(env)
        self.log = log
        self.log_level = log_level
        self.runner = runner
        self.port = free_port()
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self, timeout: float = 60.0) -> ServeProcess:
        handle = self.log.open("ab")
        command = ([sys.executable, "-m", "testkit.reliability.serve_runner"] if self.runner
                   else [sys.executable, "-m", "bot.cli", "serve", "--host", "127.0.0.1"])
        self.process = subprocess.Popen(
            [*command, "--config", str(self.config), "--port", str(self.port),
             "--log-level", self.log_level],
            env=self.env, stdout=handle, stderr=subprocess.STDOUT, cwd=ROOT,
        )
        handle.close()
        deadline = time.monotonic() + timeout
        while True:
            if self.process.poll() is not None:
                raise RuntimeError(f"prdigest serve exited with {self.process.returncode}: "
                                   f"{self.log.read_text(errors='replace')[-2000:]}")
            try:
                httpx.get(f"{self.url}/healthz", timeout=2)
                return self
            except httpx.TransportError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.1)

    def kill(self) -> None:
        """SIGKILL: no shutdown, no cleanup, nothing flushed."""
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGKILL)
            self.process.wait(10)

    def stop(self) -> None:
        if self.process is None or self.process.poll() is not None:
            return
        self.process.send_signal(signal.SIGINT)
        try:
            self.process.wait(30)
        except subprocess.TimeoutExpired:
            self.kill()


# --- counting posts ------------------------------------------------------------------------------

FEISHU_UUID_WINDOW = timedelta(hours=1)


def feishu_visible(feishu: FakeFeishu, chat: str) -> list[str]:
    """The cards a Feishu chat shows, as their content: Feishu sends at most one message
    per `uuid` within an hour ("request with the same uuid ... only one message"), so a
    card re-sent with a uuid already accepted is not a second message."""
    seen: set[str] = set()
    shown: list[str] = []
    for card in feishu.sent_cards():
        if card.target != chat:
            continue
        if card.uuid is not None:
            if card.uuid in seen:
                continue
            seen.add(card.uuid)
        shown.append(card.content)
    return shown


@dataclass(frozen=True)
class PostCount:
    """How one channel's weekly digest arrived: times its first message arrived, and
    whether the later parts arrived as often."""

    delivered: int
    duplicated: int
    lost: int
    parts: int


def count_posts(messages: list[str]) -> PostCount:
    """Messages of one channel, in arrival order, that should be one digest: the first
    message is its head; every repeat of the head is one more copy of the digest."""
    if not messages:
        return PostCount(delivered=0, duplicated=0, lost=1, parts=0)
    copies = Counter(messages)
    head = copies[messages[0]]
    return PostCount(delivered=head, duplicated=max(copies.values()) - 1, lost=0,
                     parts=len(copies))


def slack_channel_texts(fake: FakeSlack, channel: str) -> list[str]:
    return [json.dumps(p.get("blocks"), sort_keys=True) + str(p.get("text"))
            for p in fake.posted("chat.postMessage") if p.get("channel") == channel]


def telegram_chat_texts(fake: FakeTelegram, chat: str) -> list[str]:
    """Messages posted to the chat, not those answering a message in it."""
    return [m.get("text", "") for m in fake.sent()
            if m.get("chat_id") == chat and "reply_parameters" not in m]


def previous_week(moment: datetime | None = None, tz: str = TZ) -> str:
    """The ISO week a weekly post made now is about."""
    return shift_week(current_week(moment or datetime.now(UTC), tz), -1)


def week_pulls_for(week: str, repo: str = REPO, *, count: int = 8, seed: int = 3,
                   first_number: int = 1000) -> list[PullRequest]:
    """A small week of PRs for `week` (any week, e.g. last week in real time)."""
    assert week_period(week, TZ)
    return build_week(repo, count=count, week=week, tz=TZ, seed=seed, overflow=None,
                      decoys=0, first_number=first_number)


def structs_replace(value: Any, **changes: Any) -> Any:
    return msgspec.structs.replace(value, **changes)
