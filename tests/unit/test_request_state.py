"""MRTR requestState sealing: bound to key, method, params, principal and expiry."""

from __future__ import annotations

import pytest

from lambda_mcp.dispatch.request_state import StateSealer
from lambda_mcp.protocol.errors import MCPError
from lambda_mcp.state_keys import SecretKey
from lambda_mcp.storage.errors import StorageUnavailable

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


def test_a_key_read_from_secrets_manager_seals_and_survives_a_rotation(monkeypatch: pytest.MonkeyPatch) -> None:
    from moto import mock_aws

    with mock_aws():
        import boto3

        client = boto3.client("secretsmanager", region_name="us-east-1")
        arn = client.create_secret(Name="state-key", SecretString="first-key-first-key-first-key-32")["ARN"]
        sealer = StateSealer(SecretKey(arn, max_age=0))  # no caching: every call reads the secret
        before = sealer.seal("tools/call", PARAMS, {"answers": {}}, 100.0, None)
        client.put_secret_value(SecretId=arn, SecretString="second-key-second-key-second-k32")  # a rotation
        after = sealer.seal("tools/call", PARAMS, {"answers": {}}, 100.0, None)
        assert after != before  # sealed with the new current version
        assert sealer.open(before, "tools/call", PARAMS, 101.0, None) == {"answers": {}}  # AWSPREVIOUS opens
        assert StateSealer(b"second-key-second-key-second-k32").open(after, "tools/call", PARAMS, 101.0, None) == {
            "answers": {}
        }
        with pytest.raises(MCPError, match="integrity"):
            StateSealer(b"some-other-key").open(after, "tools/call", PARAMS, 101.0, None)


def test_an_unreadable_secret_is_a_retryable_error_not_a_crash() -> None:
    from moto import mock_aws

    with mock_aws():
        sealer = StateSealer(SecretKey("no-such-secret", max_age=0))
        with pytest.raises(StorageUnavailable, match="could not be read"):
            sealer.seal("tools/call", PARAMS, {}, 100.0, None)
