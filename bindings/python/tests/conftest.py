"""Shared fixtures: the repository's paths, and the scripted model server the Rust tests use
(crates/quarry-testkit), run as a process (`scripted-model-server`) and driven over HTTP."""

import json
import os
import pathlib
import subprocess
import urllib.request
from typing import Any, Dict, Iterator, List

import pytest

REPO = pathlib.Path(__file__).resolve().parents[3]


def _server_binary() -> pathlib.Path:
    configured = os.environ.get("QUARRY_SCRIPTED_SERVER")
    if configured:
        return pathlib.Path(configured)
    target = pathlib.Path(os.environ.get("CARGO_TARGET_DIR", REPO / "target"))
    return target / "debug" / "scripted-model-server"


class ScriptedServer:
    """A local model server speaking the OpenAI, Anthropic and Ollama wire protocols; each chat
    request takes the next queued reply."""

    def __init__(self) -> None:
        binary = _server_binary()
        if not binary.exists():
            raise RuntimeError(
                f"{binary} is missing: build it with `cargo build -p quarry-testkit --bin "
                "scripted-model-server` (scripts/python.sh does) or set QUARRY_SCRIPTED_SERVER"
            )
        self.process = subprocess.Popen(
            [str(binary)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
        )
        assert self.process.stdout is not None
        self.root = self.process.stdout.readline().strip()
        if not self.root.startswith("http://127.0.0.1:"):
            raise RuntimeError(f"the scripted server printed {self.root!r}, not its address")

    @property
    def base_url(self) -> str:
        """For OpenAI-compatible clients."""
        return self.root + "/v1"

    def push(self, *replies: Dict[str, Any]) -> None:
        """Queues replies: `{"tool_call": {"name", "arguments"}}`, `{"content": …}`,
        `{"status": 500, "body": …}`, each with optional `usage` and `delay_ms`."""
        request = urllib.request.Request(
            self.root + "/_testkit/script",
            data=json.dumps(list(replies)).encode(),
            headers={"Content-Type": "application/json"},
            method="POST",
        )
        with urllib.request.urlopen(request, timeout=10) as answer:
            assert json.load(answer)["queued"] == len(replies)

    def requests(self) -> List[Dict[str, Any]]:
        """The chat requests received so far."""
        with urllib.request.urlopen(self.root + "/_testkit/requests", timeout=10) as answer:
            return json.load(answer)

    def close(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.close()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


@pytest.fixture
def server() -> Iterator[ScriptedServer]:
    scripted = ScriptedServer()
    try:
        yield scripted
    finally:
        scripted.close()


def submit(arguments: Dict[str, Any], **extra: Any) -> Dict[str, Any]:
    """A model turn that calls the schema agent's `submit` tool with `arguments`."""
    return {"tool_call": {"name": "submit", "arguments": json.dumps(arguments)}, **extra}
