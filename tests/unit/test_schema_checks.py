"""The schema checks the suite relies on do catch malformed server messages (they are not vacuous)."""

from __future__ import annotations

import json

from tests.support.recorder import Recorder

MODERN_HEADERS = {"mcp-protocol-version": "2026-07-28"}
MODERN_LIST = json.dumps(
    {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/list",
        "params": {"_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}},
    }
).encode()


def _exchange(recorder: Recorder, request: bytes, response: dict[str, object], headers: dict[str, str]) -> None:
    recorder.exchange(headers, request, 200, {"content-type": "application/json"}, json.dumps(response).encode())


def test_a_modern_list_without_cache_hints_is_a_violation() -> None:
    recorder = Recorder()
    _exchange(recorder, MODERN_LIST, {"jsonrpc": "2.0", "id": 1, "result": {"tools": [], "resultType": "complete"}}, {})
    assert any("ttlMs" in v for v in recorder.violations)


def test_a_conforming_modern_list_passes() -> None:
    recorder = Recorder()
    result = {"tools": [], "resultType": "complete", "ttlMs": 0, "cacheScope": "public"}
    _exchange(recorder, MODERN_LIST, {"jsonrpc": "2.0", "id": 1, "result": result}, {})
    assert recorder.violations == [] and recorder.checked == 1


def test_result_type_sent_to_a_legacy_client_is_a_violation() -> None:
    recorder = Recorder()
    request = json.dumps({"jsonrpc": "2.0", "id": 2, "method": "ping"}).encode()
    _exchange(
        recorder,
        request,
        {"jsonrpc": "2.0", "id": 2, "result": {"resultType": "complete"}},
        {"mcp-protocol-version": "2025-11-25"},
    )
    assert any("resultType sent" in v for v in recorder.violations)


def test_a_tool_result_with_a_malformed_content_block_is_a_violation() -> None:
    recorder = Recorder()
    request = json.dumps({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "x"}}).encode()
    bad = {"jsonrpc": "2.0", "id": 3, "result": {"content": [{"type": "image", "data": "AA=="}]}}
    _exchange(recorder, request, bad, {"mcp-protocol-version": "2025-06-18"})
    assert recorder.violations
