"""What a replica imports: the optional narrator's SDK only with `[llm]`, and of
lark-oapi only the modules the Feishu adapter uses (the whole SDK still there for code
that asks for it). Each probe runs in a fresh interpreter: this process has imported
everything already."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # fresh interpreters measure what each import loads

ROOT = Path(__file__).resolve().parent.parent


def probe(code: str) -> list[str]:
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=300, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    return done.stdout.split()


SERVICES = """
import sys
from pathlib import Path
from bot.config import parse_config
from bot.snapshot import read_snapshot
from bot.source import SnapshotSource
from bot.web.services import build_services
config = parse_config({{"repos": {{"acme/lumen": {{}}}}{llm}}})
build_services(config, source=SnapshotSource(read_snapshot(Path("examples/snapshot.json"))),
               adapters={{}}, background=False)
print("openai" in sys.modules)
"""


def test_without_llm_no_openai_is_imported() -> None:
    assert probe(SERVICES.format(llm="")) == ["False"]


def test_with_llm_openai_comes_with_the_narrator() -> None:
    llm = ', "llm": {"base_url": "http://127.0.0.1:9/v1", "model": "m"}'
    assert probe(SERVICES.format(llm=llm)) == ["True"]


def test_the_feishu_adapter_loads_a_fraction_of_lark_oapi() -> None:
    lean, client, full = probe("""
import sys
from pathlib import Path
from adapters.feishu.adapter import FeishuAdapter
from bot.chat.handler import CommandHandler
from bot.config import load_config
from bot.digests import Digests
from bot.snapshot import read_snapshot
from bot.source import SnapshotSource
from bot.store.memory import MemoryCoordination
from testkit.coordination import local_claims
from bot.store.claims import Claims
config = load_config(Path("examples/prdigest.toml"))
snapshot = read_snapshot(Path("examples/snapshot.json"))
handler = CommandHandler(Digests(config, SnapshotSource(snapshot)))
from adapters.feishu.settings import FeishuSecrets
FeishuAdapter(config, handler, local_claims(), FeishuSecrets("cli_x", "s", "t", "k"))
def loaded():
    return len([m for m in sys.modules if m.startswith("lark_oapi")])
lean = loaded()
import lark_oapi  # other code asking for the whole SDK gets it
print(lean, lark_oapi.Client.__name__, loaded())
""")
    assert client == "Client"
    assert int(lean) * 10 < int(full)  # today ~480 of ~10,600
