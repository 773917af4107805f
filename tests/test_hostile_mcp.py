"""The MCP server under a hostile client: raw JSON-RPC lines on the real stdio subprocess.

Malformed JSON, non-requests, unknown methods and tools, wrong and huge arguments each get a
protocol answer (or are dropped, for what is not a request), and the server keeps serving;
a client that hangs up mid-call makes it exit cleanly.
"""

from __future__ import annotations

import json
import queue
import subprocess
import sys
import threading
import time
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

pytestmark = pytest.mark.e2e

TIMEOUT = 20.0


class RawClient:
    """Speaks newline-delimited JSON-RPC to ``python -m doc_scraper mcp-server``."""

    def __init__(self, config: Path) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "doc_scraper", "mcp-server", "-config", str(config)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        self.lines: queue.Queue[bytes] = queue.Queue()
        self.stderr = b""
        self.threads = [
            threading.Thread(target=self._read, daemon=True),
            threading.Thread(target=self._drain, daemon=True),
        ]
        for thread in self.threads:
            thread.start()
        self.next_id = 100

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.put(line)

    def _drain(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self.stderr += line

    def send_raw(self, data: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(data if data.endswith(b"\n") else data + b"\n")
        self.proc.stdin.flush()

    def send(self, message: dict[str, Any]) -> None:
        self.send_raw(json.dumps(message).encode())

    def response(self, msg_id: Any, timeout: float = TIMEOUT) -> dict[str, Any]:
        """The response with ``msg_id``; other messages (notifications, logs) are skipped."""
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError(f"no response to id {msg_id!r}; stderr: {self.stderr[-2000:]!r}")
            try:
                line = self.lines.get(timeout=left)
            except queue.Empty:
                continue
            message = json.loads(line)
            assert message.get("jsonrpc") == "2.0", message
            if message.get("id") == msg_id and ("result" in message or "error" in message):
                return message  # type: ignore[no-any-return]

    def request(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        self.next_id += 1
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": self.next_id, "method": method}
        if params is not None:
            message["params"] = params
        self.send(message)
        return self.response(self.next_id)

    def call(self, tool: str, arguments: Any) -> dict[str, Any]:
        return self.request("tools/call", {"name": tool, "arguments": arguments})

    def alive(self) -> bool:
        return self.proc.poll() is None and "result" in self.request("ping")

    def close(self) -> int:
        if self.proc.stdin:
            self.proc.stdin.close()
        try:
            return self.proc.wait(timeout=TIMEOUT)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            raise
        finally:
            for thread in self.threads:
                thread.join(TIMEOUT)
            for stream in (self.proc.stdout, self.proc.stderr):
                if stream:
                    stream.close()


def write_config(tmp: Path) -> Path:
    path = tmp / "config.yaml"
    path.write_text(
        f"output_base_dir: {tmp / 'out'}\nstate_dir: {tmp / 'state'}\n"
        "sites:\n  demo:\n    start_urls: ['http://127.0.0.1:9/docs/']\n    allowed_domain: 127.0.0.1\n",
        encoding="utf-8",
    )
    return path


def initialize(client: RawClient) -> dict[str, Any]:
    init = client.request(
        "initialize",
        {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "hostile-test", "version": "0"},
        },
    )
    client.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    return init


@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RawClient]:
    c = RawClient(write_config(tmp_path_factory.mktemp("mcp")))
    init = initialize(c)
    assert "result" in init, init
    yield c
    assert c.close() == 0
    assert b"Traceback" not in c.stderr, c.stderr[-3000:]


def test_malformed_json_gets_a_parse_error_or_is_dropped_and_the_server_stays_up(client: RawClient) -> None:
    for junk in (b"{not json", b"\xff\xfe\x00garbage", b'{"jsonrpc": "2.0", "id": 1, "method": ', b"[1, 2"):
        client.send_raw(junk)
        assert client.alive()


@pytest.mark.parametrize(
    "message",
    [
        [],
        {},
        {"jsonrpc": "2.0"},
        {"jsonrpc": "1.0", "id": 7, "method": "ping"},
        {"id": 8, "method": "ping"},
        {"jsonrpc": "2.0", "id": {"nested": True}, "method": "ping"},
        42,
        "string",
        None,
    ],
)
def test_json_that_is_not_a_request_does_not_stop_the_server(client: RawClient, message: Any) -> None:
    client.send_raw(json.dumps(message).encode())
    assert client.alive()


def test_an_unknown_method_is_method_not_found(client: RawClient) -> None:
    answer = client.request("no/such/method", {})
    assert answer["error"]["code"] == -32601
    assert client.alive()


def test_an_unknown_tool_is_an_error_naming_the_tools(client: RawClient) -> None:
    answer = client.call("rm_rf", {"path": "/"})
    text = json.dumps(answer)
    assert answer.get("result", {}).get("isError") or "error" in answer
    assert "search_docs" in text
    assert client.alive()


@pytest.mark.parametrize(
    ("tool", "arguments", "named"),
    [
        ("search_docs", {"query": 123}, "query"),
        ("search_docs", {"query": "x", "limit": "ten"}, "limit"),
        ("search_docs", {"query": ["a", "b"]}, "query"),
        ("search_docs", {}, "query"),
        ("read_page", {"url": {"$gt": ""}}, "url"),
        ("crawl_site", {"site_key": "../../etc"}, "site_key"),
        ("get_job_status", {"job_id": None}, "job_id"),
        ("search_docs", {"query": "x", "bogus": 1}, "bogus"),
    ],
)
def test_wrong_argument_types_are_tool_errors_naming_the_argument(
    client: RawClient, tool: str, arguments: dict[str, Any], named: str
) -> None:
    answer = client.call(tool, arguments)
    if "error" in answer:
        assert answer["error"]["code"] == -32602, answer
        text = answer["error"]["message"]
    else:
        assert answer["result"]["isError"] is True, answer
        text = " ".join(c.get("text", "") for c in answer["result"]["content"])
    assert named in text, text
    assert "Traceback" not in text
    assert client.alive()


def test_arguments_that_are_not_an_object_are_refused(client: RawClient) -> None:
    answer = client.request("tools/call", {"name": "search_docs", "arguments": ["query"]})
    assert "error" in answer or answer["result"]["isError"]
    assert client.alive()


def test_huge_arguments_are_answered_quickly_and_the_server_stays_up(client: RawClient) -> None:
    started = time.monotonic()
    answer = client.call("search_docs", {"query": "asyncio " * 700_000})  # ~5.6 MB
    assert "error" in answer or answer["result"]["isError"] or "content" in answer["result"]
    answer = client.call("read_page", {"url": "http://x/" + "a" * 1_000_000})
    assert "error" in answer or answer["result"]["isError"]
    assert time.monotonic() - started < TIMEOUT
    assert client.alive()


def test_a_client_that_hangs_up_mid_call_lets_the_server_exit_cleanly(tmp_path: Path) -> None:
    c = RawClient(write_config(tmp_path))
    initialize(c)
    c.send(
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "tools/call",
            "params": {"name": "search_docs", "arguments": {"query": "asyncio gather " * 1000}},
        }
    )
    c.send(
        {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "tools/call",
            "params": {"name": "list_pages", "arguments": {"site_key": "demo"}},
        }
    )
    code = c.close()  # stdin closed with both calls possibly in flight
    assert code == 0, c.stderr[-3000:]
    assert b"Traceback" not in c.stderr, c.stderr[-3000:]
