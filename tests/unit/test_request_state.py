"""MRTR requestState sealing: bound to key, method, params, principal and expiry."""

from __future__ import annotations

import pytest

from lambda_mcp.dispatch.request_state import StateSealer
from lambda_mcp.protocol.errors import MCPError

PARAMS = {"name": "tool", "arguments": {"a": 1}, "_meta": {"x": 1}}


def test_a_sealed_state_opens_on_any_instance_with_the_same_key() -> None:
    state = StateSealer(b"shared").seal("tools/call", PARAMS, {"answers": {"k": {"action": "accept"}}}, 100.0, "alice")
    retried = {**PARAMS, "_meta": {"y": 2}, "inputResponses": {}, "requestState": state}
    assert StateSealer(b"shared").open(state, "tools/call", retried, 101.0, "alice") == {
        "answers": {"k": {"action": "accept"}}
    }


@pytest.mark.parametrize(
    ("key", "method", "params", "now", "principal"),
    [
        (b"other", "tools/call", PARAMS, 101.0, "alice"),
        (b"shared", "prompts/get", PARAMS, 101.0, "alice"),
        (b"shared", "tools/call", {**PARAMS, "arguments": {"a": 2}}, 101.0, "alice"),
        (b"shared", "tools/call", PARAMS, 100.0 + 10_000, "alice"),
        (b"shared", "tools/call", PARAMS, 101.0, "mallory"),
    ],
)
def test_a_state_for_anything_else_is_rejected_with_invalid_params(
    key: bytes, method: str, params: dict[str, object], now: float, principal: str
) -> None:
    state = StateSealer(b"shared").seal("tools/call", PARAMS, {}, 100.0, "alice")
    with pytest.raises(MCPError) as caught:
        StateSealer(key).open(state, method, params, now, principal)
    assert caught.value.code == -32602


@pytest.mark.parametrize("garbage", ["", "abc", "a.b.c", 42, "x.y"])
def test_garbage_is_rejected(garbage: object) -> None:
    with pytest.raises(MCPError) as caught:
        StateSealer(b"k").open(garbage, "tools/call", PARAMS, 0, None)
    assert caught.value.code == -32602


def test_without_a_key_sealing_is_a_clear_configuration_error() -> None:
    with pytest.raises(MCPError) as caught:
        StateSealer(None).seal("tools/call", PARAMS, {}, 0, None)
    assert "LAMBDA_MCP_STATE_KEY" in caught.value.message
