"""What the server, subscription and report-page tests share: the example config and
snapshot, a recording adapter, a running app with an HTTP client, GitHub webhook
payloads with real signatures, and a GitHub fake for conditional PR lists.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import json
import threading
from collections.abc import AsyncIterator, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, ClassVar
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest
from starlette.applications import Starlette
from starlette.routing import BaseRoute

from adapters.base import DeliveryError
from adapters.delivering import NoArrivalLookup
from bot.clock import HeldClock
from bot.config import ChannelConfig, Config, load_config
from bot.models import Digest, PullRequest, Reply, Snapshot
from bot.snapshot import read_snapshot
from bot.web.services import Services
from testkit import EXAMPLES

CONFIG_PATH = EXAMPLES / "prdigest.toml"
SNAPSHOT_PATH = EXAMPLES / "snapshot.json"
REPO = "acme/lumen"
# Wednesday of 2026-W30 in Shanghai: W29 (the example snapshot's week) is last week.
NOW = datetime(2026, 7, 22, 4, 0, tzinfo=UTC)
WEBHOOK_SECRET = "It's a Secret to Everybody"
# The example config's channels of acme/lumen, and the topics each follows.
SLACK = "slack:C0123456"          # configured topics: npu, rollout
TELEGRAM = "telegram:-1001234567890"  # trainer
FEISHU = "feishu:oc_0123456789abcdef"  # checkpoint

PLATFORM_ENV = (
    "SLACK_BOT_TOKEN", "SLACK_SIGNING_SECRET", "SLACK_APP_TOKEN",
    "TELEGRAM_BOT_TOKEN", "TELEGRAM_WEBHOOK_SECRET",
    "FEISHU_APP_ID", "FEISHU_APP_SECRET", "FEISHU_VERIFICATION_TOKEN", "FEISHU_ENCRYPT_KEY",
    "GITHUB_TOKEN", "GITHUB_WEBHOOK_SECRET", "REDIS_URL", "PRDIGEST_REPORT_SECRET",
)


def example_config() -> Config:
    return load_config(CONFIG_PATH)


def example_snapshot() -> Snapshot:
    return read_snapshot(SNAPSHOT_PATH)


def example_channel(key: str) -> ChannelConfig:
    """A channel of the example config, by its key (`slack:C0123456`)."""
    found = example_config().channel(key)
    assert found is not None
    return found


def clear_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """No platform, GitHub or Redis settings from the machine running the tests."""
    for name in PLATFORM_ENV:
        monkeypatch.delenv(name, raising=False)


def snapshot_clock() -> HeldClock:
    """The date held where the example snapshot was fetched (its week is `this week`)."""
    moment = example_snapshot().fetched_at
    assert moment is not None
    return HeldClock(moment)


def clock() -> HeldClock:
    """An app's clock: the date held at `NOW` (the example week's Wednesday), waits in
    real time."""
    return HeldClock(NOW)


@dataclass
class RecordingAdapter(NoArrivalLookup):
    """A chat adapter that keeps what it was asked to send; `fail` refuses every post."""

    platform: str
    replies: list[tuple[str, Reply]] = field(default_factory=list)
    digests: list[tuple[str, Digest]] = field(default_factory=list)
    # The message each reply was posted under (None: the channel itself).
    threads: list[str | None] = field(default_factory=list)
    fail: bool = False
    started: int = 0
    closed: int = 0
    max_message_chars: ClassVar[int] = 0
    dedupe_window: ClassVar[timedelta | None] = None
    max_inbound_bytes: ClassVar[int] = 0
    refusal_headers: ClassVar[Mapping[str, str]] = {}

    async def start(self) -> None:
        self.started += 1

    def routes(self) -> list[BaseRoute]:
        return []

    def status(self) -> dict[str, Any]:
        return {"platform": self.platform, "configured": True, "mode": "recording"}

    async def send_reply(self, channel_id: str, reply: Reply, *, thread: str | None = None,
                         idempotency_key: str | None = None) -> list[str]:
        if self.fail:
            raise DeliveryError(f"{self.platform}: refused")
        self.replies.append((channel_id, reply))
        self.threads.append(thread)
        return [f"{self.platform}-{len(self.replies)}"]

    async def post_digest(self, channel_id: str, digest: Digest, *,
                          idempotency_key: str | None = None) -> list[str]:
        if self.fail:
            raise DeliveryError(f"{self.platform}: refused")
        self.digests.append((channel_id, digest))
        return [f"{self.platform}-digest-{len(self.digests)}"]

    async def close(self) -> None:
        self.closed += 1


def recording_adapters() -> dict[str, RecordingAdapter]:
    return {p: RecordingAdapter(p) for p in ("slack", "telegram", "feishu")}


@contextlib.asynccontextmanager
async def serving(app: Starlette) -> AsyncIterator[httpx.AsyncClient]:
    """The app with its lifespan running, and a client speaking to it in-process."""
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://prdigest.test") as http:
            yield http


def services_of(app: Starlette) -> Services:
    services: Services = app.state.services
    return services


@contextlib.contextmanager
def webhook_service(redis_url: str) -> Iterator[tuple[Starlette, dict[str, RecordingAdapter]]]:
    """The service on the example files with the GitHub webhook on (its secret in the
    environment meanwhile) and recording adapters: (the app, its adapters by platform)."""
    from bot.source import SnapshotSource
    from bot.web.app import create_app

    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("GITHUB_WEBHOOK_SECRET", WEBHOOK_SECRET)
        adapters = recording_adapters()
        yield create_app(example_config(), redis_url=redis_url,
                         source=SnapshotSource(example_snapshot()), clock=clock(),
                         background=False, adapters=adapters), adapters


# --- GitHub webhooks ------------------------------------------------------------------------


def sign(body: bytes, secret: str = WEBHOOK_SECRET) -> str:
    return "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


def pull_payload(pull: PullRequest) -> dict[str, Any]:
    """A pull request as GitHub's REST and webhook payloads spell it."""

    def iso(moment: datetime | None) -> str | None:
        return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ") if moment else None

    return {
        "number": pull.number, "title": pull.title, "html_url": pull.url,
        "state": "open" if pull.state == "open" else "closed",
        "merged": pull.state == "merged", "draft": bool(pull.draft),
        "user": {"login": pull.author or "someone"}, "body": pull.body,
        "labels": [{"name": label} for label in pull.labels],
        "base": {"ref": pull.base or "main"},
        "created_at": iso(pull.created_at), "updated_at": iso(pull.updated_at or pull.merged_at),
        "merged_at": iso(pull.merged_at), "closed_at": iso(pull.closed_at or pull.merged_at),
        "additions": pull.additions, "deletions": pull.deletions,
        "changed_files": pull.changed_files,
    }


def merged_event(pull: PullRequest, repo: str = REPO, *, action: str = "closed"
                 ) -> dict[str, Any]:
    return {"action": action, "number": pull.number, "pull_request": pull_payload(pull),
            "repository": {"full_name": repo, "private": False}}


def webhook_request(payload: dict[str, Any], *, delivery: str, event: str = "pull_request",
                    secret: str | None = WEBHOOK_SECRET) -> tuple[bytes, dict[str, str]]:
    body = json.dumps(payload).encode()
    headers = {"Content-Type": "application/json", "X-GitHub-Event": event,
               "X-GitHub-Delivery": delivery}
    if secret is not None:
        headers["X-Hub-Signature-256"] = sign(body, secret)
    return body, headers


# --- a GitHub that answers PR lists with ETags ------------------------------------------------


@dataclass
class ListRequest:
    path: str
    query: dict[str, list[str]]
    headers: dict[str, str]
    status: int = 0


class ConditionalGitHub:
    """`GET /repos/{owner}/{name}/pulls` on 127.0.0.1:<free port>, as GitHub answers it:
    sorted by `updated_at`, paged, with an ETag that changes whenever the list does and
    `304 Not Modified` (no body) to a matching `If-None-Match`."""

    def __init__(self, repo: str = REPO) -> None:
        self.repo = repo
        self.pulls: dict[int, dict[str, Any]] = {}
        self.requests: list[ListRequest] = []
        self._lock = threading.Lock()
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                """Quiet: tests read `requests`."""

            def do_GET(self) -> None:
                fake._serve(self)

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    def __enter__(self) -> ConditionalGitHub:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def put(self, pull: PullRequest) -> None:
        with self._lock:
            self.pulls[pull.number] = pull_payload(pull)

    def _listing(self) -> list[dict[str, Any]]:
        with self._lock:
            items = [p for p in self.pulls.values() if p["state"] == "closed"]
        return sorted(items, key=lambda p: (p["updated_at"] or "", p["number"]), reverse=True)

    def _serve(self, handler: BaseHTTPRequestHandler) -> None:
        parts = urlsplit(handler.path)
        recorded = ListRequest(path=parts.path, query=parse_qs(parts.query),
                               headers={k.lower(): v for k, v in handler.headers.items()})
        with self._lock:
            self.requests.append(recorded)
        if parts.path != f"/repos/{self.repo}/pulls":
            self._send(handler, recorded, 404, {"message": "Not Found"}, {})
            return
        per_page = int(recorded.query.get("per_page", ["30"])[0])
        page = int(recorded.query.get("page", ["1"])[0])
        items = self._listing()[(page - 1) * per_page: page * per_page]
        body = json.dumps(items).encode()
        etag = f'W/"{hashlib.sha256(body).hexdigest()[:16]}"'
        if recorded.headers.get("if-none-match") == etag:
            self._send(handler, recorded, 304, None, {"ETag": etag})
            return
        self._send(handler, recorded, 200, items, {"ETag": etag})

    @staticmethod
    def _send(handler: BaseHTTPRequestHandler, recorded: ListRequest, status: int,
              payload: Any, headers: dict[str, str]) -> None:
        recorded.status = status
        handler.send_response(status)
        for name, value in headers.items():
            handler.send_header(name, value)
        if payload is None:  # a 304 has no body
            handler.send_header("Content-Length", "0")
            handler.end_headers()
            return
        data = json.dumps(payload).encode()
        handler.send_header("Content-Type", "application/json; charset=utf-8")
        handler.send_header("Content-Length", str(len(data)))
        handler.end_headers()
        handler.wfile.write(data)


def list_requests(fake: ConditionalGitHub) -> Iterator[ListRequest]:
    yield from (r for r in fake.requests if r.path.endswith("/pulls"))


def snapshot_pull(number: int) -> PullRequest:
    return next(p for p in example_snapshot().pulls if p.number == number)


def path_of(url: str) -> str:
    return urlsplit(url).path


def notices(adapters: dict[str, RecordingAdapter]) -> list[tuple[str, str, int]]:
    return sorted((platform, channel_id, reply.pull.number)
                  for platform, adapter in adapters.items()
                  for channel_id, reply in adapter.replies if reply.pull is not None)
