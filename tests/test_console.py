"""The console adapter and `prdigest ask` / `prdigest chat`: same grammar, same replies."""

from __future__ import annotations

import io
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
from typer.testing import CliRunner

from adapters.base import ChatAdapter
from adapters.console import ConsoleAdapter, console_channel
from bot.chat.handler import CommandHandler
from bot.cli import app
from bot.clock import HeldClock
from bot.config import ChannelConfig, Config, RepoConfig
from bot.digests import Digests
from bot.models import Snapshot
from bot.snapshot import data_time, write_snapshot
from testkit.chat_week import CONFIG, NOW, OPEN_CHANNEL, REPO, SNAPSHOT
from testkit.fakes.chat import InMemorySubscriptionStore, RecordingSource

CONFIG_TOML = f"""
[repos."{REPO}"]
timezone = "Asia/Shanghai"
[repos."{REPO}".topics]
npu = {{ keywords = ["npu", "ascend"] }}

[[channels]]
platform = "console"
id = "local"
repo = "{REPO}"
lang = "zh"
topics = ["npu"]
"""


@pytest.fixture
def console() -> tuple[ConsoleAdapter, io.StringIO]:
    output = io.StringIO()
    handler = CommandHandler(Digests(CONFIG, RecordingSource(SNAPSHOT),
                                     subscriptions=InMemorySubscriptionStore(),
                                     clock=HeldClock(NOW)))
    return ConsoleAdapter(handler, OPEN_CHANNEL, output=output, user="U_ALICE"), output


def test_the_console_is_a_chat_adapter(console: tuple[ConsoleAdapter, io.StringIO]) -> None:
    adapter: ChatAdapter = console[0]
    assert adapter.platform == "console"
    assert adapter.routes() == []


async def test_ask_writes_the_reply(console: tuple[ConsoleAdapter, io.StringIO]) -> None:
    adapter, output = console
    reply = await adapter.ask("#7035 有什么风险")
    assert (reply.kind, reply.lang) == ("pull", "zh")
    assert "发现 1 项风险：" in output.getvalue()
    assert output.getvalue().endswith("\n")


async def test_a_digest_posted_to_the_console_is_the_text_digest(
    console: tuple[ConsoleAdapter, io.StringIO],
) -> None:
    adapter, output = console
    reply = await adapter.answer("digest 2026-W29")
    assert reply.digest is not None
    await adapter.post_digest("local", reply.digest)
    assert "weekly report, 2026 week 29" in output.getvalue()


async def test_the_platform_language_overrides_detection() -> None:
    output = io.StringIO()
    handler = CommandHandler(Digests(CONFIG, RecordingSource(SNAPSHOT), clock=HeldClock(NOW)))
    adapter = ConsoleAdapter(handler, OPEN_CHANNEL, output=output, lang="en")
    await adapter.ask("帮助")
    assert "I answer questions" in output.getvalue()


def _lines(*lines: str) -> Iterator[str]:
    yield from lines


def _reader(lines: Iterator[str], prompts: list[str]) -> object:
    def read_line(prompt: str) -> str:
        prompts.append(prompt)
        try:
            return next(lines)
        except StopIteration:
            raise EOFError from None

    return read_line


def test_chat_answers_until_an_exit_word(console: tuple[ConsoleAdapter, io.StringIO]) -> None:
    adapter, output = console
    prompts: list[str] = []
    read_line = _reader(_lines("risks 7035", "   ", "天气怎么样", "退出", "help"), prompts)
    answered = adapter.chat(read_line)  # type: ignore[arg-type]
    assert answered == 2
    assert len(prompts) == 4
    text = output.getvalue()
    assert "1 risk found:" in text
    assert "抱歉，我没看懂“天气怎么样”。" in text
    assert "I answer questions" not in text  # `help` came after the exit word


@pytest.mark.parametrize("ending", [EOFError, KeyboardInterrupt])
def test_chat_ends_at_end_of_input_or_ctrl_c(
    console: tuple[ConsoleAdapter, io.StringIO], ending: type[BaseException]
) -> None:
    adapter, output = console
    asked: list[str] = ["topics"]

    def read_line(prompt: str) -> str:
        if asked:
            return asked.pop()
        raise ending

    assert adapter.chat(read_line) == 1
    assert "This chat follows npu." in output.getvalue()


def test_console_channel_prefers_the_configured_one() -> None:
    configured = ChannelConfig(platform="console", id="me", repo=REPO, admins=("alice",))
    config = Config(repos={REPO: RepoConfig(timezone="Europe/Berlin")},
                    channels=(OPEN_CHANNEL, configured))
    assert console_channel(config, REPO.upper()) == configured
    made = console_channel(Config(repos={REPO: RepoConfig(timezone="Europe/Berlin")}), REPO,
                           "zh")
    assert (made.platform, made.repo, made.lang, made.timezone) == (
        "console", REPO, "zh", "Europe/Berlin")


def test_data_time_is_the_latest_moment_of_the_snapshot() -> None:
    assert data_time(SNAPSHOT) == datetime(2026, 7, 21, 4, 0, tzinfo=UTC)
    empty = Snapshot(repository=REPO, fetched_at=datetime(2026, 1, 1, tzinfo=UTC))
    assert data_time(empty) == datetime(2026, 1, 1, tzinfo=UTC)
    assert data_time(Snapshot(repository=REPO)) is None


# --- the command line -----------------------------------------------------------------


@pytest.fixture(autouse=True)
def no_redis_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """The CLI reads REDIS_URL; a test run may have it set for the Redis fixture."""
    monkeypatch.delenv("REDIS_URL", raising=False)


@pytest.fixture
def files(tmp_path: Path) -> tuple[Path, Path]:
    snapshot = tmp_path / "snapshot.json"
    write_snapshot(SNAPSHOT, snapshot)
    config = tmp_path / "prdigest.toml"
    config.write_text(CONFIG_TOML, encoding="utf-8")
    return snapshot, config


def _run(*args: str, stdin: str | None = None) -> tuple[int, str, str]:
    result = CliRunner().invoke(app, list(args), input=stdin)
    return result.exit_code, result.stdout, result.stderr


@pytest.mark.parametrize(
    ("question", "code", "expected"),
    [
        ("risks for #7035", 0, "1 risk found:"),
        ("#7035 有什么风险", 0, "发现 1 项风险："),
        ("总结 #6974", 0, "2-3x faster"),
        # `digest` is the latest week of the data (#7120 was merged in W30)
        ("digest", 0, "2026 week 30"),
        ("上周周报", 0, "2026 年第 29 周"),
        ("topics", 0, "This chat follows npu."),
        ("hello there", 0, "Hello! I am prdigest"),
        ("what is the weather", 0, "Sorry, I did not understand “what is the weather”."),
        ("今天天气怎么样", 0, "抱歉，我没看懂“今天天气怎么样”。"),
        ("risks 4242", 1, f"{REPO} has no PR #4242"),
        ("digest 2026-W60", 1, "2026 has weeks 1 to 53"),
        ("subscribe npu", 1, "Subscriptions are kept in Redis, which is not set up here"),
        ("follow acme/lumen", 1, "settings are kept in Redis, which is not set up here"),
    ],
)
def test_prdigest_ask(
    files: tuple[Path, Path], question: str, code: int, expected: str
) -> None:
    snapshot, config = files
    exit_code, out, _ = _run("ask", question, "--snapshot", str(snapshot), "--config",
                             str(config))
    assert exit_code == code
    assert expected in out


def test_prdigest_ask_joins_unquoted_words(files: tuple[Path, Path]) -> None:
    snapshot, _ = files
    exit_code, out, _ = _run("ask", "summary", "6974", "--snapshot", str(snapshot))
    assert (exit_code, "2-3x faster" in out) == (0, True)


@pytest.mark.parametrize(("flag", "expected"), [("zh", "发现 1 项风险："), ("en", "1 risk found:")])
def test_prdigest_ask_lang(files: tuple[Path, Path], flag: str, expected: str) -> None:
    snapshot, _ = files
    _, out, _ = _run("ask", "risks 7035", "--snapshot", str(snapshot), "--lang", flag)
    assert expected in out


def test_prdigest_ask_markdown(files: tuple[Path, Path]) -> None:
    snapshot, _ = files
    _, out, _ = _run("ask", "risks 7035", "--snapshot", str(snapshot), "--format", "markdown")
    assert "[evidence](https://github.com/verl-project/verl/pull/7035#discussion_r1)" in out


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (("--repo", "other/repo"), "holds verl-project/verl, not other/repo"),
        (("--config", "/nonexistent/prdigest.toml"), "cannot read"),
    ],
)
def test_prdigest_ask_setup_errors_exit_2(
    files: tuple[Path, Path], extra: tuple[str, ...], message: str
) -> None:
    snapshot, _ = files
    exit_code, out, err = _run("ask", "risks 7035", "--snapshot", str(snapshot), *extra)
    assert exit_code == 2
    assert message in err
    assert out == ""


def test_prdigest_ask_without_a_repository_says_how_to_name_one() -> None:
    exit_code, _, err = _run("ask", "risks 7035")
    assert exit_code == 2
    assert "--repo owner/name" in err


def test_prdigest_chat(files: tuple[Path, Path]) -> None:
    snapshot, config = files
    exit_code, out, _ = _run("chat", "--snapshot", str(snapshot), "--config", str(config),
                             stdin="risks 7035\n\n帮助\nquit\nrisks 6974\n")
    assert exit_code == 0
    assert "1 risk found:" in out
    assert "我可以回答 verl-project/verl 的 PR 相关问题：" in out
    assert "#6974 [ckpt" not in out  # nothing after quit was answered
    assert out.count("prdigest>") == 0  # no prompt when nobody is typing


def test_prdigest_chat_ends_at_end_of_input(files: tuple[Path, Path]) -> None:
    snapshot, _ = files
    exit_code, out, _ = _run("chat", "--snapshot", str(snapshot), stdin="topics\n")
    assert exit_code == 0
    assert "This chat does not follow any topic yet." in out


# --- the real snapshots ---------------------------------------------------------------


@pytest.mark.realdata
@pytest.mark.parametrize(
    ("name", "question", "expected"),
    [
        ("verl-2026-07.json", "总结 #6974", "delta_sharded"),
        ("verl-2026-07.json", "周报 2026-W29", "本周共处理 28 个 PR"),
        ("verl-2026-07.json", "digest last week", "2026 week 29"),  # the data ends in W30
        ("verl-2026-07.json", "#7035 有什么风险", "#7035"),
        ("vllm-2026-W29.json", "digest", "vllm-project/vllm weekly report, 2026 week 29"),
        ("vllm-2026-W29.json", "topics", "more."),
    ],
)
def test_prdigest_ask_on_real_data(
    shared_data: Path, name: str, question: str, expected: str
) -> None:
    exit_code, out, _ = _run("ask", question, "--snapshot", str(shared_data / name))
    assert exit_code == 0
    assert expected in out


def test_prdigest_ask_subscribes_through_the_servers_redis(
    files: tuple[Path, Path], redis_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    snapshot, config = files
    monkeypatch.setenv("REDIS_URL", redis_url)
    common = ("--snapshot", str(snapshot), "--config", str(config))
    exit_code, out, _ = _run("ask", "订阅 rollout", *common)
    assert (exit_code, "已订阅 rollout" in out) == (0, True)
    _, out, _ = _run("ask", "topics", *common)
    assert "This chat follows npu and rollout." in out
    # The same store a server uses: the channel's key holds the topic.
    import redis

    from bot.store.redis.subscriptions import RedisSubscriptionStore

    store = RedisSubscriptionStore(redis.Redis.from_url(redis_url))
    assert store.topics("console:local") == {"rollout"}


def test_prdigest_ask_reports_a_bad_redis_url(
    files: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    snapshot, _ = files
    monkeypatch.setenv("REDIS_URL", "not-a-url")
    exit_code, _, err = _run("ask", "topics", "--snapshot", str(snapshot))
    assert exit_code == 2
    assert "REDIS_URL: not a Redis URL" in err
