"""llama.cpp's own OpenAI-compatible server (``python -m llama_cpp.server``, from the
``llama-cpp-python[server]`` extra) on 127.0.0.1, serving the GGUF ragpilot already assembles.

It is what a user runs as "their own local model server", so ragpilot's hosted path meets a real
server's subset of the OpenAI API here (``response_format``, streaming options, usage), not a fake
that answers whatever it is sent.

    with LlamaCppServer(gguf_path) as server:
        settings = load_settings(llm={"base_url": server.base_url, "model": server.model})
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import httpx

from tests.servers.ports import free_port

START_TIMEOUT_S = 180
MODEL_ALIAS = "local-qwen"


class LlamaCppServer:
    """The server process for the life of the ``with`` block."""

    def __init__(self, model_path: Path, *, threads: int = 2, context: int = 4096) -> None:
        self.port = free_port()
        self.model = MODEL_ALIAS
        self._command = [
            sys.executable, "-m", "llama_cpp.server", "--model", str(model_path), "--model_alias", MODEL_ALIAS,
            "--host", "127.0.0.1", "--port", str(self.port), "--n_ctx", str(context), "--n_threads", str(threads),
        ]  # fmt: skip
        self._process: subprocess.Popen[bytes] | None = None
        self._log_path = Path(f"/tmp/ragpilot-llama-server-{self.port}.log")

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def log_tail(self) -> str:
        return self._log_path.read_text(errors="replace")[-3000:] if self._log_path.exists() else ""

    def __enter__(self) -> LlamaCppServer:
        log = self._log_path.open("wb")
        self._process = subprocess.Popen(self._command, stdout=log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + START_TIMEOUT_S
        while time.monotonic() < deadline:
            if self._process.poll() is not None:
                raise RuntimeError(
                    f"llama_cpp.server exited with {self._process.returncode}:\n{self.log_tail()}"
                )
            try:
                if httpx.get(f"{self.base_url}/models", timeout=2).status_code == 200:
                    return self
            except httpx.HTTPError:
                pass
            time.sleep(0.5)
        self.__exit__()
        raise RuntimeError(f"llama_cpp.server did not answer within {START_TIMEOUT_S} s:\n{self.log_tail()}")

    def __exit__(self, *exc: object) -> None:
        if self._process is not None and self._process.poll() is None:
            self._process.terminate()
            try:
                self._process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self._process.kill()
        self._log_path.unlink(missing_ok=True)
