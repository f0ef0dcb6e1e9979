"""Bad input on every route of the running service: never a 5xx, never a traceback.

Unsigned garbage gets a 4xx (401 where a signature is missing); signed garbage -
malformed JSON, the wrong content type, deep nesting, odd unicode, near-valid payloads
with one field replaced by anything - gets a 4xx or a calm 2xx, and nothing breaks.
Forged and stale signatures get 401 and cause nothing; a replayed request is answered
once. Hypothesis draws the inputs; the app runs once for the module (Starlette's
TestClient, whose loop keeps running between requests) against the fakes, and the
tests that count what the platforms got have an app and fakes of their own (`quiet`).
"""

from __future__ import annotations

import contextlib
import json
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, get_args
from urllib.parse import urlencode, urlsplit, urlunsplit

import pytest
import redis
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from starlette.testclient import TestClient

from bot.chat.grammar import parse_command
from bot.models import CommandKind
from bot.web.app import create_app
from testkit.fakes.feishu import bot_mention, encrypt, message_event
from testkit.fakes.feishu import signed_headers as feishu_headers
from testkit.fakes.slack_payloads import SlackPayloads
from testkit.fakes.slack_payloads import signed_headers as slack_headers
from testkit.fakes.telegram import group_chat, message_update
from testkit.reliability.names import REPO, SECRETS, SLACK_CHANNEL, TELEGRAM_CHAT, WEEK
from testkit.reliability.world import World, clock, world, write_config
from testkit.server_support import PLATFORM_ENV, merged_event, sign, snapshot_pull

FUZZ = settings(max_examples=100, deadline=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
POST_ROUTES = ("/slack/events", "/telegram/webhook", "/feishu/events", "/github/webhook")
CONTENT_TYPES = ("application/json", "application/x-www-form-urlencoded", "text/plain",
                 "multipart/form-data; boundary=xyz", "application/json; charset=latin-1",
                 "application/octet-stream", "")
ODD_TEXT = st.text(alphabet=st.characters(codec="utf-8"), max_size=60) | st.sampled_from([
    "\u202e\u2066", "\x00", "\ud7ff\ue000\uffff", "𝔡𝔦𝔤𝔢𝔰𝔱 #7035", "‮risks for #1", "订阅 npu\u3000",
    "#" + "9" * 400, "risks for #-1", "digest 9999-W99", "\ufeffhelp", "a" * 5000,
    "mute 999 years", "mute " + "9" * 400 + "d", "静音 0 天", "mute banana", "免打扰\u202e 2 小时",
])
JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | ODD_TEXT,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(ODD_TEXT, inner, max_size=4),
    max_leaves=25,
)


@contextlib.contextmanager
def _serving(fakes: World, redis_url: str, workdir: Path) -> Iterator[TestClient]:
    """The app against `fakes`, on an emptied Redis database of its own."""
    redis.Redis.from_url(redis_url).flushdb()
    with pytest.MonkeyPatch.context() as patch:
        for name in PLATFORM_ENV:
            patch.delenv(name, raising=False)
        for name, value in fakes.env(redis_url).items():
            patch.setenv(name, value)
        config = write_config(workdir / "prdigest.toml", fakes.urls())
        app = create_app(config, redis_url=redis_url, clock=clock(), background=False)
        with TestClient(app, raise_server_exceptions=True) as http:
            yield http


@pytest.fixture(scope="module")
def fakes() -> Iterator[World]:
    with world() as started:
        yield started


@pytest.fixture(scope="module")
def client(fakes: World, redis_server_url: str, tmp_path_factory: pytest.TempPathFactory
           ) -> Iterator[TestClient]:
    with _serving(fakes, redis_server_url, Path(tmp_path_factory.mktemp("bad"))) as http:
        yield http


@pytest.fixture(scope="module")
def quiet(redis_server_url: str, tmp_path_factory: pytest.TempPathFactory
          ) -> Iterator[tuple[TestClient, World]]:
    """A second app and fakes for the tests that count what the platforms got: the
    fuzzing tests' answers still arrive long after their requests (each post waits its
    turn in its chat's lane, Slack's one a second), so those counts are taken where
    nothing else is being sent - other fakes, and a Redis database (its lanes, claims
    and dedupe) of their own."""
    db = redis.Redis.from_url(redis_server_url).connection_pool.connection_kwargs.get("db", 0)
    other_database = urlunsplit(urlsplit(redis_server_url)._replace(path=f"/{db + 1}"))
    with world() as started, _serving(started, other_database,
                                      Path(tmp_path_factory.mktemp("quiet"))) as http:
        yield http, started


def calm(status: int) -> bool:
    return status < 500


# --- the command parser ----------------------------------------------------------------------


@pytest.mark.slow  # many CPU seconds: in `make test-all`, not the quick loop
@FUZZ
@given(text=ODD_TEXT, lang=st.sampled_from([None, "en", "zh"]))
def test_the_parser_reads_anything_into_a_command(text: str, lang: Any) -> None:
    command = parse_command(text, lang=lang)
    assert command.kind in get_args(CommandKind)  # a command the handler answers
    assert command.pull is None or command.pull >= 0


# --- unsigned garbage ------------------------------------------------------------------------


@pytest.mark.parametrize("route", POST_ROUTES)
@FUZZ
@given(body=st.binary(max_size=2000), content_type=st.sampled_from(CONTENT_TYPES))
def test_unsigned_garbage_gets_a_4xx(client: TestClient, route: str, body: bytes,
                                     content_type: str) -> None:
    answer = client.post(route, content=body, headers={"Content-Type": content_type})
    assert 400 <= answer.status_code < 500, (route, answer.status_code, answer.text)
    assert "Traceback" not in answer.text


@pytest.mark.parametrize("route", POST_ROUTES)
@pytest.mark.parametrize("body", [
    b"[" * 100_000 + b"]" * 100_000,
    b'{"a":' * 50_000 + b"1" + b"}" * 50_000,
    b"x" * ((1 << 20) + 1),
    b'{"update_id": 1e999999}',
    b"\xff\xfe\x00\x00",
    "{\"text\": \"\ud800\"}".encode("utf-8", "surrogatepass"),
], ids=["deep-list", "deep-object", "1MB+1", "huge-number", "utf32-bom", "lone-surrogate"])
def test_hostile_bodies_without_a_signature_get_a_4xx(client: TestClient, route: str,
                                                     body: bytes) -> None:
    answer = client.post(route, content=body, headers={"Content-Type": "application/json"})
    assert 400 <= answer.status_code < 500, (route, answer.status_code, answer.text[:200])


# --- signed garbage --------------------------------------------------------------------------


def _signed(route: str, body: bytes, content_type: str = "application/json"
            ) -> dict[str, str]:
    """The headers each platform would send with `body`, with its real secret."""
    if route == "/slack/events":
        return slack_headers(body, content_type=content_type or "application/json")
    if route == "/telegram/webhook":
        return {"Content-Type": content_type,
                "X-Telegram-Bot-Api-Secret-Token": SECRETS["TELEGRAM_WEBHOOK_SECRET"]}
    if route == "/feishu/events":
        headers = feishu_headers(body, SECRETS["FEISHU_ENCRYPT_KEY"])
        headers["Content-Type"] = content_type
        return headers
    return {"Content-Type": content_type, "X-GitHub-Event": "pull_request",
            "X-GitHub-Delivery": uuid.uuid4().hex,
            "X-Hub-Signature-256": sign(body, SECRETS["GITHUB_WEBHOOK_SECRET"])}


@pytest.mark.parametrize("route", POST_ROUTES)
@FUZZ
@given(value=JSON_VALUES, content_type=st.sampled_from(CONTENT_TYPES))
def test_signed_json_of_any_shape_gets_no_5xx(client: TestClient, route: str, value: Any,
                                              content_type: str) -> None:
    body = json.dumps(value).encode()
    if route == "/feishu/events" and isinstance(value, dict):
        body = encrypt(SECRETS["FEISHU_ENCRYPT_KEY"], value)
    answer = client.post(route, content=body, headers=_signed(route, body, content_type))
    assert calm(answer.status_code), (route, answer.status_code, answer.text[:300])


@pytest.mark.parametrize("route", POST_ROUTES)
@pytest.mark.parametrize("body", [
    b"[" * 100_000 + b"]" * 100_000,
    b'{"a":' * 50_000 + b"1" + b"}" * 50_000,
    b'{"update_id": 1, "message": ' * 2_000 + b"1" + b"}" * 2_000,
    b"{not json",
    b"",
    b"null",
], ids=["deep-list", "deep-object", "deep-update", "broken", "empty", "null"])
def test_signed_malformed_bodies_get_a_4xx(client: TestClient, route: str,
                                          body: bytes) -> None:
    answer = client.post(route, content=body, headers=_signed(route, body))
    assert calm(answer.status_code), (route, answer.status_code, answer.text[:200])
    if route != "/slack/events":  # Slack acknowledges an empty event with 200 or 401
        assert answer.status_code >= 400 or body == b"", (route, answer.status_code)


# Near-valid payloads: a real one with one field, anywhere in it, replaced by anything.

def _paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    found = [prefix]
    if isinstance(value, dict):
        for key, item in value.items():
            found += _paths(item, (*prefix, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            found += _paths(item, (*prefix, index))
    return found


def _replace(value: Any, path: tuple[Any, ...], new: Any) -> Any:
    if not path:
        return new
    copy = json.loads(json.dumps(value))
    target = copy
    for step in path[:-1]:
        target = target[step]
    target[path[-1]] = new
    return copy


def _near_valid(make: Callable[[], dict[str, Any]]) -> st.SearchStrategy[dict[str, Any]]:
    base = make()
    return st.tuples(st.sampled_from(_paths(base)), JSON_VALUES).map(
        lambda pair: _replace(base, pair[0], pair[1]))


def _slack_event(text: str = "digest") -> dict[str, Any]:
    payloads = SlackPayloads()
    return payloads.event_callback(payloads.app_mention(f"<@UBOT0001> {text}",
                                                        channel=SLACK_CHANNEL),
                                   event_id=f"Ev{uuid.uuid4().hex[:10].upper()}")


def _telegram_update() -> dict[str, Any]:
    return message_update(7, "/risks 1201", chat=group_chat(int(TELEGRAM_CHAT)))


def _feishu_event() -> dict[str, Any]:
    return message_event("@_user_1 risks for #1201", token=SECRETS["FEISHU_VERIFICATION_TOKEN"],
                         mentions=[bot_mention()])


def _github_event() -> dict[str, Any]:
    return merged_event(snapshot_pull(1201), REPO)


NEAR_VALID = {"/slack/events": _slack_event, "/telegram/webhook": _telegram_update,
              "/feishu/events": _feishu_event, "/github/webhook": _github_event}


@pytest.mark.parametrize("route", POST_ROUTES)
@FUZZ
@given(data=st.data())
def test_near_valid_payloads_get_no_5xx(client: TestClient, route: str,
                                        data: st.DataObject) -> None:
    value = data.draw(_near_valid(NEAR_VALID[route]))
    if isinstance(value, dict) and isinstance(value.get("header"), dict):
        value["header"]["event_id"] = uuid.uuid4().hex  # else dedupe hides the rest
    body = json.dumps(value).encode()
    if route == "/feishu/events":
        body = encrypt(SECRETS["FEISHU_ENCRYPT_KEY"], value if isinstance(value, dict)
                       else {"v": value})
    answer = client.post(route, content=body, headers=_signed(route, body))
    assert calm(answer.status_code), (route, answer.status_code, answer.text[:300])


@FUZZ
@given(text=ODD_TEXT)
def test_any_slash_command_text_is_acknowledged(client: TestClient, text: str) -> None:
    body = urlencode(SlackPayloads().slash_command(text, channel_id=SLACK_CHANNEL,
                                                   response_url="http://127.0.0.1:9/x"))
    answer = client.post("/slack/events", content=body, headers=slack_headers(body))
    assert answer.status_code == 200, answer.text


@FUZZ
@given(owner=ODD_TEXT, repo=ODD_TEXT, week=ODD_TEXT, lang=ODD_TEXT, key=ODD_TEXT)
def test_report_pages_take_any_address(client: TestClient, owner: str, repo: str,
                                       week: str, lang: str, key: str) -> None:
    from urllib.parse import quote

    path = f"/reports/{quote(owner or 'x', safe='')}/{quote(repo or 'y', safe='')}"
    for url in (path, f"{path}/{quote(week or 'w', safe='')}"):
        answer = client.get(url, params={"lang": lang, "key": key})
        assert answer.status_code in {200, 308, 400, 404}, (url, answer.status_code)


# --- forged, stale and replayed signatures ---------------------------------------------------


def _slack_command(text: str) -> bytes:
    return urlencode(SlackPayloads().slash_command(
        text, channel_id=SLACK_CHANNEL, response_url="http://127.0.0.1:9/never")).encode()


STALE = int(time.time()) - 3600


def _forged(route: str) -> list[tuple[str, bytes, dict[str, str]]]:
    """(case, body, headers) that a platform would never send: a wrong secret, a
    signature over other bytes, a stale timestamp, no signature at all."""
    cases: list[tuple[str, bytes, dict[str, str]]] = []
    if route == "/slack/events":
        body = _slack_command("digest")
        cases = [
            ("wrong-secret", body, slack_headers(body, secret="not-the-secret")),
            ("other-bytes", body, slack_headers(b"text=other")),
            ("stale", body, slack_headers(body, timestamp=STALE)),
            ("future", body, slack_headers(body, timestamp=int(time.time()) + 3600)),
            ("missing", body, {"Content-Type": "application/x-www-form-urlencoded"}),
        ]
    elif route == "/telegram/webhook":
        body = json.dumps(_telegram_update()).encode()
        good = SECRETS["TELEGRAM_WEBHOOK_SECRET"]
        cases = [
            ("wrong-secret", body, {"X-Telegram-Bot-Api-Secret-Token": "guess"}),
            ("prefix", body, {"X-Telegram-Bot-Api-Secret-Token": good[:-1]}),
            ("longer", body, {"X-Telegram-Bot-Api-Secret-Token": good + "x"}),
            ("missing", body, {}),
        ]
    elif route == "/feishu/events":
        key = SECRETS["FEISHU_ENCRYPT_KEY"]
        body = encrypt(key, _feishu_event())
        cases = [
            ("wrong-key", body, feishu_headers(body, "not-the-key")),
            ("other-bytes", body, feishu_headers(encrypt(key, {"a": 1}), key)),
            ("stale", body, feishu_headers(body, key, timestamp=STALE)),
            ("future", body, feishu_headers(body, key, timestamp=int(time.time()) + 3600)),
            ("missing", body, {"Content-Type": "application/json"}),
            ("plain-event", json.dumps(_feishu_event()).encode(),
             feishu_headers(json.dumps(_feishu_event()).encode(), key)),
        ]
    else:
        body = json.dumps(_github_event()).encode()
        base = {"X-GitHub-Event": "pull_request", "X-GitHub-Delivery": "d-1"}
        cases = [
            ("wrong-secret", body, {**base, "X-Hub-Signature-256": sign(body, "guess")}),
            ("other-bytes", body, {**base, "X-Hub-Signature-256": sign(b"{}")}),
            ("sha1", body, {**base, "X-Hub-Signature-256": "sha1=" + "0" * 40}),
            ("missing", body, base),
        ]
    return cases


FORGED = [(route, case, body, headers) for route in POST_ROUTES
          for case, body, headers in _forged(route)]


@pytest.mark.parametrize(("route", "case", "body", "headers"), FORGED,
                         ids=[f"{r}-{c}" for r, c, _, _ in FORGED])
def test_forged_and_stale_signatures_get_401_and_cause_nothing(
    quiet: tuple[TestClient, World], route: str, case: str, body: bytes,
    headers: dict[str, str],
) -> None:
    client, fakes = quiet
    before = fakes.payload_count()
    answer = client.post(route, content=body, headers=headers)
    assert answer.status_code == 401, (route, case, answer.status_code, answer.text)
    time.sleep(0.05)
    assert fakes.payload_count() == before


def _wait_for(condition: Callable[[], bool], timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError("condition not met in time")
        time.sleep(0.02)


def test_replayed_requests_are_answered_once(quiet: tuple[TestClient, World]) -> None:
    """Each platform's exact request sent three times (a replay within the signature's
    window, or the platform's own retry): one answer each, one notice."""
    client, fakes = quiet

    def slack_posts(threaded: bool) -> int:
        return sum(bool(p.get("thread_ts")) == threaded
                   for p in fakes.slack.posted("chat.postMessage"))

    answers = {"slack": lambda: slack_posts(True), "notice": lambda: slack_posts(False),
               "telegram": lambda: len(fakes.telegram.sent()),
               "feishu": lambda: len(fakes.feishu.sent_cards())}
    time.sleep(0.5)
    assert fakes.payload_count() == 0  # the forged requests before caused nothing, late or not
    before = {name: count() for name, count in answers.items()}

    slack_body = json.dumps(_slack_event("help")).encode()
    telegram_body = json.dumps(message_update(
        424242, "/help", chat=group_chat(int(TELEGRAM_CHAT)))).encode()
    feishu_body = encrypt(SECRETS["FEISHU_ENCRYPT_KEY"], message_event(
        "@_user_1 help", token=SECRETS["FEISHU_VERIFICATION_TOKEN"],
        mentions=[bot_mention()]))
    github_body = json.dumps(merged_event(snapshot_pull(1208), REPO)).encode()
    requests = [
        ("/slack/events", slack_body, slack_headers(slack_body,
                                                    content_type="application/json")),
        ("/telegram/webhook", telegram_body, _signed("/telegram/webhook", telegram_body)),
        ("/feishu/events", feishu_body, feishu_headers(feishu_body,
                                                       SECRETS["FEISHU_ENCRYPT_KEY"])),
        ("/github/webhook", github_body, _signed("/github/webhook", github_body)),
    ]
    statuses = []
    for _ in range(3):
        for route, body, headers in requests:
            statuses.append(client.post(route, content=body, headers=headers).status_code)
    assert all(status == 200 for status in statuses), statuses
    _wait_for(lambda: all(count() > before[name] for name, count in answers.items()))
    time.sleep(0.5)
    assert {name: count() - before[name] for name, count in answers.items()} == {
        "slack": 1, "telegram": 1, "feishu": 1, "notice": 1}


def test_a_report_page_of_a_week_is_served_to_bad_languages_as_400(client: TestClient) -> None:
    answer = client.get(f"/reports/{REPO}/{WEEK}", params={"lang": "<script>"})
    assert answer.status_code == 400
    assert "<script>" not in answer.text
