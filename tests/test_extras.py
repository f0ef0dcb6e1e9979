"""Slim installs: each chat platform's SDK and the narrator's are extras. A Slack-only
installation (`pip install 'prdigest[slack]'`) carries and imports no lark-oapi, openai,
python-telegram-bot or Babel; a platform configured but not installed is one line
naming the extra; the catalogs are read from the `.mo` files the build compiled."""

from __future__ import annotations

import importlib.util
import random
import re
import subprocess
import sys
import textwrap
from importlib import metadata
from pathlib import Path

import pytest
from babel.numbers import format_percent
from packaging.requirements import Requirement
from typer.testing import CliRunner

import bot.extras
import bot.i18n as i18n
from bot.cli import app as cli_app
from bot.config import LLMConfig
from bot.extras import MissingExtra
from bot.i18n import compile_catalog, percent, translations
from bot.narrate import narrator_for
from bot.web.app import create_app
from testkit import ROOT
from testkit.server_support import CONFIG_PATH, clear_env, example_config

HEAVY = {"lark-oapi", "openai", "python-telegram-bot", "babel"}


@pytest.fixture(autouse=True)
def _no_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    clear_env(monkeypatch)


def _without(monkeypatch: pytest.MonkeyPatch, *modules: str) -> None:
    """This installation as one without `modules` (what `find_spec` says of them)."""
    real = importlib.util.find_spec
    monkeypatch.setattr(bot.extras.importlib.util, "find_spec",
                        lambda name, *a: None if name in modules else real(name, *a))


def _closure(extras: set[str]) -> set[str]:
    """Every distribution `pip install 'prdigest[<extras>]'` brings, read from the
    installed packages' own metadata (markers evaluated for this Python)."""
    seen: set[str] = set()
    todo = [("prdigest", frozenset(extras))]
    while todo:
        name, wanted = todo.pop()
        for text in metadata.distribution(name).requires or ():
            requirement = Requirement(text)
            marker = requirement.marker
            if marker is not None and not any(
                    marker.evaluate({"extra": extra}) for extra in (wanted or {""})):
                continue
            key = re.sub(r"[-_.]+", "-", requirement.name).lower()
            if key == "prdigest":
                todo.append((key, frozenset(requirement.extras)))
            elif key not in seen:
                seen.add(key)
                todo.append((key, frozenset(requirement.extras)))
    return seen


def test_a_slack_only_install_brings_no_other_sdk_nor_babel() -> None:
    slack = _closure({"slack"})
    assert {"slack-bolt", "slack-sdk", "aiohttp"} <= slack
    assert slack.isdisjoint(HEAVY), slack & HEAVY
    everything = _closure({"all"})
    assert {"lark-oapi", "openai", "python-telegram-bot"} <= everything
    assert "babel" not in everything  # a build and development tool only


@pytest.mark.slow  # many CPU seconds: in `make test-all`, not the quick loop
def test_a_slack_only_service_imports_no_other_sdk() -> None:
    """The service with Slack's secrets, in an interpreter where importing lark-oapi,
    openai, PTB or Babel fails: it builds, answers /healthz and /readyz, and none of
    them was asked for."""
    script = textwrap.dedent('''
        import asyncio, importlib.abc, os, sys
        BLOCKED = ("lark_oapi", "openai", "telegram", "babel")
        class Block(importlib.abc.MetaPathFinder):
            def find_spec(self, name, path, target=None):
                if name.split(".")[0] in BLOCKED:
                    raise ImportError(f"{name} is not installed here")
        sys.meta_path.insert(0, Block())
        os.environ.update(SLACK_BOT_TOKEN="xoxb-1", SLACK_SIGNING_SECRET="s")
        import pathlib
        import httpx
        from adapters.registry import load_settings
        from bot.web.app import create_app
        async def main():
            app = create_app(load_settings(pathlib.Path(sys.argv[1])), background=False, llm=False)
            async with app.router.lifespan_context(app):
                http = httpx.AsyncClient(transport=httpx.ASGITransport(app=app),
                                         base_url="http://x")
                health = await http.get("/healthz")
                ready = await http.get("/readyz")
            print(health.json()["platforms"]["slack"]["configured"], ready.status_code)
        asyncio.run(main())
        print(sorted(m for m in sys.modules if m.split(".")[0] in BLOCKED))
    ''')
    out = subprocess.run([sys.executable, "-c", script, str(CONFIG_PATH)], cwd=ROOT,
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.split("\n")[:2] == ["True 200", "[]"]


def test_a_configured_platform_that_is_not_installed_is_one_line(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    _without(monkeypatch, "lark_oapi")
    for name, value in (("FEISHU_APP_ID", "cli_x"), ("FEISHU_APP_SECRET", "s"),
                        ("FEISHU_VERIFICATION_TOKEN", "v"), ("FEISHU_ENCRYPT_KEY", "k")):
        monkeypatch.setenv(name, value)
    expected = ("feishu (configured here) needs lark_oapi, which this installation lacks: "
                "install prdigest[feishu] (pip install 'prdigest[feishu]')")
    with pytest.raises(MissingExtra) as raised:
        create_app(example_config(), background=False)
    assert str(raised.value) == expected
    result = CliRunner().invoke(cli_app, ["serve", "--config", str(CONFIG_PATH),
                                          "--log-level", "warning"])
    assert result.exit_code == 2
    assert result.output.strip().splitlines() == [f"prdigest: error: {expected}"]
    preview = CliRunner().invoke(cli_app, [
        "digest", "acme/lumen", "--week", "2026-W29", "--config", str(CONFIG_PATH),
        "--snapshot", str(ROOT / "examples" / "snapshot.json"), "--format", "feishu"])
    assert preview.exit_code == 2
    assert "install prdigest[feishu]" in preview.output and "Traceback" not in preview.output


def test_the_narrator_without_openai_names_the_llm_extra(monkeypatch: pytest.MonkeyPatch
                                                         ) -> None:
    _without(monkeypatch, "openai")
    config = example_config()
    import msgspec
    config = msgspec.structs.replace(config, llm=LLMConfig(base_url="http://x", model="m"))
    with pytest.raises(MissingExtra, match=r"install prdigest\[llm\]"):
        narrator_for(config)
    assert narrator_for(config, enabled=False) is None  # --no-llm needs no SDK


def test_a_percentage_is_written_as_babel_wrote_it() -> None:
    """Babel left the runtime; its rounding (half to even on the decimal) stays."""
    chooser = random.Random(7)
    shares = [chooser.random() * 1.2 for _ in range(5000)] + \
        [n / 1000 for n in range(1001)] + [0.425, 0.435, 0.005, 12.345]
    for share in shares:
        assert percent(share, "zh") == format_percent(share, locale="zh_CN"), share
        assert percent(share, "en") == format_percent(share, locale="en_US"), share


def test_catalogs_are_read_from_mo_files_without_babel(monkeypatch: pytest.MonkeyPatch,
                                                       tmp_path: Path) -> None:
    """An installation has the compiled `.mo` only and no Babel: the words are there. A
    `.po` left uncompiled there is one line saying so."""
    source = ROOT / "templates" / "i18n" / "zh" / "LC_MESSAGES" / "digest.po"
    folder = tmp_path / "i18n" / "zh" / "LC_MESSAGES"
    folder.mkdir(parents=True)
    (folder / "digest.mo").write_bytes(compile_catalog(source, "zh"))
    for name in ("babel", "babel.messages", "babel.messages.mofile", "babel.messages.pofile"):
        monkeypatch.setitem(sys.modules, name, None)
    # The checkout's own catalogs are not what is under test (a `.po` edited since
    # `make setup` is newer than its `.mo`): an installation of this one folder is.
    monkeypatch.setattr(i18n, "template_dir", lambda: tmp_path / "core")
    translations.cache_clear()
    try:
        catalog = translations("zh", (tmp_path,))
        assert catalog.gettext("Risk observations") == "风险观察"
        (tmp_path / "more" / "i18n" / "zh" / "LC_MESSAGES").mkdir(parents=True)
        (tmp_path / "more" / "i18n" / "zh" / "LC_MESSAGES" / "extra.po").write_text(
            'msgid "x"\nmsgstr "y"\n')
        with pytest.raises(Exception, match=r"extra\.po: not compiled \(no extra\.mo\)"):
            translations("zh", (tmp_path / "more",))
    finally:
        translations.cache_clear()
