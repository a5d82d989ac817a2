"""Envelope classification, header decoding, cursors, Host/Origin patterns, version negotiation."""

from __future__ import annotations

import pytest

from lambda_mcp.dispatch.pagination import page
from lambda_mcp.protocol import jsonrpc, revisions
from lambda_mcp.protocol.errors import MCPError
from lambda_mcp.transport import headers, security


@pytest.mark.parametrize(
    ("message", "kind"),
    [
        ({"jsonrpc": "2.0", "id": 1, "method": "ping"}, "request"),
        ({"jsonrpc": "2.0", "method": "notifications/initialized"}, "notification"),
        ({"jsonrpc": "2.0", "id": "s-1", "result": {}}, "response"),
        ({"jsonrpc": "2.0", "id": "s-1", "error": {"code": -1, "message": "no"}}, "response"),
    ],
)
def test_envelopes_are_classified(message: dict[str, object], kind: str) -> None:
    assert jsonrpc.classify(message).kind == kind


@pytest.mark.parametrize(
    "message",
    [
        {"jsonrpc": "2.0", "id": None, "method": "ping"},
        {"jsonrpc": "2.0", "id": True, "method": "ping"},
        {"jsonrpc": "1.0", "id": 1, "method": "ping"},
        {"jsonrpc": "2.0", "id": 1},
        {"jsonrpc": "2.0", "id": 1, "result": {}, "error": {}},
        [1, 2],
    ],
)
def test_bad_envelopes_are_invalid_requests(message: object) -> None:
    with pytest.raises(MCPError) as caught:
        jsonrpc.classify(message)
    assert caught.value.code == -32600


def test_header_values_decode_base64_and_reject_control_characters() -> None:
    assert headers.decode("  plain ") == "plain"
    assert headers.decode("=?base64?w6lsw6h2ZQ==?=") == "élève"
    for bad in ("=?base64?***?=", "=?base64?YQ?=", "a\x01b"):
        with pytest.raises(MCPError) as caught:
            headers.decode(bad)
        assert caught.value.code == -32020


def test_mcp_param_integers_compare_numerically() -> None:
    headers.validate(
        {"mcp-method": "tools/call", "mcp-name": "t", "mcp-param-n": "42"},
        "tools/call",
        {"name": "t", "arguments": {"n": 42.0}},
        {"n": "n"},
    )
    with pytest.raises(MCPError):
        headers.validate(
            {"mcp-method": "tools/call", "mcp-name": "t", "mcp-param-n": "43"},
            "tools/call",
            {"name": "t", "arguments": {"n": 42}},
            {"n": "n"},
        )


def test_cursors_walk_a_list_and_reject_foreign_values() -> None:
    items = list(range(5))
    first, cursor = page(items, None, 2)
    second, cursor2 = page(items, cursor, 2)
    last, end = page(items, cursor2, 2)
    assert (first, second, last, end) == ([0, 1], [2, 3], [4], None)
    with pytest.raises(MCPError):
        page(items, "bm9wZQ==", 2)


def test_host_and_origin_patterns() -> None:
    assert security.host_allowed("127.0.0.1:8123", security.LOOPBACK_HOSTS)
    assert security.host_allowed("localhost", security.LOOPBACK_HOSTS)
    assert not security.host_allowed("evil.example.com", security.LOOPBACK_HOSTS)
    assert not security.host_allowed(None, security.LOOPBACK_HOSTS)
    assert security.host_allowed("api.example.com", ["*.example.com"])
    assert security.origin_allowed(None, [])
    assert not security.origin_allowed("http://evil.example.com", security.LOOPBACK_ORIGINS)


def test_legacy_negotiation_echoes_or_counter_offers_the_newest_legacy_version() -> None:
    assert revisions.negotiate_legacy("2025-06-18") == "2025-06-18"
    assert revisions.negotiate_legacy("2026-07-28") == "2025-11-25"
    assert revisions.negotiate_legacy(None) == "2025-11-25"
