"""What leaves for the model: a private repository's text only when its config opts in,
and never a secret or an HTML comment from any PR."""

from __future__ import annotations

import json
import tomllib
from typing import Any

import msgspec
import pytest

from bot.config import parse_config
from bot.digests import Digests
from bot.narrate import MemoryNarrations, narrator_for
from bot.narrate.redact import redact
from bot.source import SnapshotSource
from testkit.fakes.openai import FakeOpenAI
from testkit.narration.secrets import SECRETS as FORMS
from testkit.narration.secrets import Secret
from testkit.narration.secrets import found as found_secrets
from testkit.narration.secrets import planted as planted_secrets
from testkit.narration.week import EXAMPLE, REPO, WEEK
from testkit.server_support import example_snapshot

SECRETS = {
    "github": "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8",
    "github_pat": "github_pat_" + "11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz0123",
    "openai": "sk-" + "abcdefghijklmnopqrstuvwxyz012345",
    "openai_project": "sk-proj-" + "Abc123Def456Ghi789Jkl012Mno345Pqr678",
    "slack": "xoxb-" + "123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx",
    "aws": "AKIA" + "IOSFODNN7EXAMPLE",
    "pem": "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA7yn3bRHQ5FHMQ\n"
           "-----END RSA PRIVATE KEY-----",
    "jwt": "eyJhbGciOiJIUzI1NiJ9" + ".eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9P",
    "password": "password=" + "hunter2-but-longer",
    "gitlab": "glpat-" + "AbCdEfGhIjKlMnOpQrSt12",
    "npm": "npm_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8",
    "telegram": "123456789:" + "AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw",
    "stripe": "sk_live_" + "4eC39HqLyjWDarjtT1zdp7dc",
}
HIDDEN = "<!-- note for reviewers only: 11 internal hosts -->"

@pytest.fixture(autouse=True)
def _fresh(fake: FakeOpenAI) -> None:
    fake.reset()



def _config(base_url: str, **repo: Any) -> Any:
    data = tomllib.loads((EXAMPLE / "prdigest.toml").read_text())
    data["repos"][REPO].update(repo)
    data["llm"] = {"base_url": base_url, "model": "fake-model", "timeout_seconds": 2,
                   "budget_seconds": 20}
    return parse_config(data)


async def _build(config: Any, snapshot: Any = None) -> Any:
    digests = Digests(config, SnapshotSource(snapshot or example_snapshot()),
                      narrator=narrator_for(config, MemoryNarrations()))
    return digests, await digests.build(REPO, WEEK, "zh")


@pytest.mark.parametrize(("repo", "calls"), [
    ({"private": True}, False), ({"private": True, "narrate": True}, True),
    ({"narrate": False}, False), ({}, True),
])
async def test_a_private_repository_is_narrated_only_when_it_opts_in(
        fake: FakeOpenAI, repo: dict[str, Any], calls: bool) -> None:
    digests, digest = await _build(_config(fake.base_url, **repo))
    assert (fake.calls > 0) is calls
    assert (digest.narration is not None) is calls
    pull = digests.source.fetch_pull(REPO, digest.key_pulls[0].number)
    answer = await digests.pull_answer(pull, REPO, "zh")
    assert (answer.summary != digests.answer_for(pull, REPO, "zh").summary) is calls


async def test_no_secret_or_html_comment_reaches_a_prompt(fake: FakeOpenAI) -> None:
    snapshot = example_snapshot()
    planted = " ".join(SECRETS.values())
    pulls = tuple(msgspec.structs.replace(
        p, body=f"{HIDDEN}\nSetup: {planted}\n\n{p.body or ''}",
        title=f"{p.title} {SECRETS['github']}") for p in snapshot.pulls)
    _, digest = await _build(_config(fake.base_url), msgspec.structs.replace(snapshot,
                                                                             pulls=pulls))
    assert digest.narration is not None and fake.calls > 0
    sent = json.dumps(fake.requests, ensure_ascii=False)
    for name, value in SECRETS.items():
        tail = value.splitlines()[1] if name == "pem" else value.split("=")[-1]
        assert tail not in sent, name
    assert "internal hosts" not in sent
    assert "[redacted]" in sent


def test_every_kind_of_secret_is_redacted() -> None:
    for name, value in SECRETS.items():
        out = redact(f"before {value} after")
        assert out.startswith("before ") and out.endswith(" after") and "[redacted]" in out, name
    assert redact("max_tokens=4096 and num_tokens: 5") == "max_tokens=4096 and num_tokens: 5"
    assert redact("postgres://app:S3cretPassw0rd@db.internal:5432/app") == \
        "postgres://[redacted]@db.internal:5432/app"


@pytest.mark.parametrize("secret", FORMS, ids=[s.name for s in FORMS])
def test_each_of_nineteen_forms_is_redacted_as_a_reader_would_read_it(secret: Secret) -> None:
    out = redact(f"前文 {secret.text} after")
    assert secret.value not in out and "[redacted]" in out
    assert out.startswith("前文 ") and out.endswith(" after")


def test_what_only_looks_like_a_secret_stays() -> None:
    kept = ("max_tokens=4096, sort_key=len, num_tokens: 5, MAX_TOKENS=8192; adds a token "
            "classification head; verl/workers/rollout/vllm_rollout/vllm_async_server.py; "
            "reverts 3f2a9c1d8e7b6a5f4e3d2c1b0a9f8e7d6c5b4a39; `HybridW4A16LinearKernel`; "
            "tests/workers/rollout/test_vision_placeholder_tokens_on_cpu.py")
    assert redact(kept) == kept


async def test_none_of_nineteen_forms_reaches_a_prompt(fake: FakeOpenAI) -> None:
    snapshot = example_snapshot()
    pulls = tuple(msgspec.structs.replace(p, body=planted_secrets() + (p.body or ""))
                  for p in snapshot.pulls)
    _, digest = await _build(_config(fake.base_url), msgspec.structs.replace(snapshot,
                                                                             pulls=pulls))
    assert digest.narration is not None and fake.calls > 0
    sent = json.dumps(fake.requests, ensure_ascii=False)
    assert found_secrets(sent) == []
    assert len(FORMS) == 19 and sent.count("[redacted]") >= 19
