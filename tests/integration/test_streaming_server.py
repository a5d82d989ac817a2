"""Behaviour that needs a live streaming server (`lambda-mcp dev` under uvicorn): cancellation, the GET stream."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.support.processes import ServerProcess, lambda_mcp_dev
from tests.support.schema import sse_messages

HEADERS = {"content-type": "application/json", "accept": "application/json, text/event-stream"}


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[ServerProcess, Path]]:
    work = tmp_path_factory.mktemp("streaming")
    violations = work / "violations.txt"
    violations.touch()
    process = lambda_mcp_dev(
        "tests/apps/slow.py", through_lambda=False, validate_into=violations, log=work / "server.log"
    )
    yield process, violations
    process.stop()
    assert violations.read_text() == ""


def _session(http: httpx.Client, url: str) -> dict[str, str]:
    params = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}
    response = http.post(
        url, json={"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": params}, headers=HEADERS
    )
    headers = {**HEADERS, "mcp-session-id": response.headers["mcp-session-id"], "mcp-protocol-version": "2025-11-25"}
    http.post(url, json={"jsonrpc": "2.0", "method": "notifications/initialized"}, headers=headers)
    return headers


def _events(lines: Iterator[str]) -> Iterator[dict[str, Any]]:
    block: list[str] = []
    for line in lines:
        if line:
            block.append(line)
            continue
        yield from sse_messages(("\n".join(block) + "\n\n").encode())
        block = []


def test_legacy_cancel_stops_the_call_and_no_response_is_sent(server: tuple[ServerProcess, Path]) -> None:
    process, _ = server
    with httpx.Client(timeout=10) as http:
        headers = _session(http, process.url)
        call = {
            "jsonrpc": "2.0",
            "id": 7,
            "method": "tools/call",
            "params": {"name": "slow", "_meta": {"progressToken": 1}},
        }
        seen: list[dict[str, Any]] = []
        with http.stream("POST", process.url, json=call, headers=headers) as response:
            assert response.headers["content-type"].startswith("text/event-stream")
            for message in _events(response.iter_lines()):
                seen.append(message)
                if len(seen) == 2:
                    cancel = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 7}}
                    assert http.post(process.url, json=cancel, headers=headers).status_code == 202
        assert len(seen) < 20, "the call ran on after the cancel"
        assert all("result" not in m and "error" not in m for m in seen), "a cancelled request got a response"
        assert all(m.get("method") == "notifications/progress" for m in seen)


def test_get_stream_carries_list_changes_and_subscribed_resource_updates(server: tuple[ServerProcess, Path]) -> None:
    process, _ = server
    with httpx.Client(timeout=10) as http:
        headers = _session(http, process.url)
        subscribe = {"jsonrpc": "2.0", "id": 1, "method": "resources/subscribe", "params": {"uri": "test://watched"}}
        subscribed = http.post(process.url, json=subscribe, headers=headers)
        assert subscribed.headers["content-type"] == "application/json"  # nothing but the result: plain JSON
        assert subscribed.json()["result"] == {}
        with http.stream("GET", process.url, headers={**headers, "accept": "text/event-stream"}) as stream:
            assert stream.status_code == 200
            lines = stream.iter_lines()
            next(lines)  # the stream-open comment: the server is listening
            for uri in ("test://other", "test://watched"):
                call = {
                    "jsonrpc": "2.0",
                    "id": 2,
                    "method": "tools/call",
                    "params": {"name": "touch", "arguments": {"uri": uri}},
                }
                assert "announced" in json.dumps(http.post(process.url, json=call, headers=headers).json())
            received: list[dict[str, Any]] = []
            for message in _events(lines):
                received.append(message)
                if len(received) == 3:
                    break
        methods = [(m["method"], m.get("params", {}).get("uri")) for m in received]
        assert methods == [
            ("notifications/tools/list_changed", None),
            ("notifications/resources/updated", "test://watched"),
            ("notifications/tools/list_changed", None),
        ]
