"""The connection tokens' sealing (KMS envelope encryption against moto, and the state key), the
declarations `app.connection` refuses, and the test client's seeded connections."""

from __future__ import annotations

import boto3
import pytest
from moto import mock_aws

from lambda_mcp import ConnectionDeclined, Context, CredentialsUnavailable, MCPApp
from lambda_mcp.facade.token_sealing import KmsEnvelope, StateKeySealing
from lambda_mcp.server.errors import DeclarationError
from lambda_mcp.testing import Client

pytestmark = pytest.mark.anyio


@pytest.fixture
def kms(monkeypatch: pytest.MonkeyPatch) -> object:
    for name, value in {
        "AWS_ACCESS_KEY_ID": "x",
        "AWS_SECRET_ACCESS_KEY": "x",
        "AWS_DEFAULT_REGION": "us-east-1",
    }.items():
        monkeypatch.setenv(name, value)
    with mock_aws():
        yield boto3.client("kms", region_name="us-east-1")


def test_kms_envelope_seals_per_item_and_opens_only_for_that_item(kms: object) -> None:
    key = kms.create_key(KeySpec="SYMMETRIC_DEFAULT")["KeyMetadata"]["KeyId"]  # type: ignore[attr-defined]
    sealing = KmsEnvelope(key, client=kms)
    sealed = sealing.seal('{"access_token": "gho_secret"}', "row-a")
    assert "gho_secret" not in str(sealed) and sealed["k"] and sealed["d"]
    assert sealing.unseal(sealed, "row-a") == '{"access_token": "gho_secret"}'
    assert sealing.unseal(sealed, "row-b") is None  # another item's context: KMS refuses the data key
    other = sealing.seal("x", "row-a")
    assert other["d"] != sealed["d"]  # one data key per item written
    assert sealing.unseal({"k": key}, "row-a") is None


def test_state_key_sealing_opens_after_a_rotation_and_only_for_its_row() -> None:
    old, new = b"o" * 32, b"n" * 32
    sealed = StateKeySealing(lambda: [old]).seal("token", "row-a")
    rotated = StateKeySealing(lambda: [new, old])
    assert rotated.unseal(sealed, "row-a") == "token" and rotated.unseal(sealed, "row-b") is None


@pytest.mark.parametrize(
    ("declared", "why"),
    [
        ({"authorize_url": "http://github.com/authorize"}, "https"),
        ({"client_id": ""}, "client_id"),
        ({"authorize_params": {"redirect_uri": "https://evil.example"}}, "redirect_uri"),
    ],
)
def test_a_bad_connection_is_refused_where_it_is_declared(declared: dict[str, object], why: str) -> None:
    base = {"authorize_url": "https://p.example/a", "token_url": "https://p.example/t", "client_id": "c"}
    with pytest.raises(DeclarationError, match=why):
        MCPApp("x").connection("demo", **{**base, **declared})
    with pytest.raises(DeclarationError, match="name"):
        MCPApp("x").connection("Bad Name", **base)


async def test_the_test_client_plays_the_user_with_seeded_tokens() -> None:
    app = MCPApp("seeded")

    @app.tool()
    async def token_length(ctx: Context) -> int:
        return len(await ctx.connection("github"))

    @app.tool()
    async def missing(ctx: Context) -> str:
        try:
            await ctx.connection("gitlab")
        except ConnectionDeclined:
            return "declined"
        return "?"

    async with Client(app, connections={"github": "token-for-tests"}) as client:
        assert (await client.call_tool("token_length")).text == str(len("token-for-tests"))
        failed = await client.call_tool("missing")
        assert failed.is_error and "connections=" in failed.text
    async with Client(app) as client:  # no facade, nothing seeded: a clear error result
        failed = await client.call_tool("token_length")
        assert failed.is_error and "LAMBDA_MCP_AUTH=proxy" in failed.text
    assert issubclass(CredentialsUnavailable, Exception)


def test_the_upstream_asks_for_rfc_8693_token_exchange_or_entras_on_behalf_of() -> None:
    from lambda_mcp.config import Settings
    from lambda_mcp.facade.upstream import TOKEN_EXCHANGE, Upstream, UpstreamError

    def upstream(issuer: str, grants: list[str] | None) -> tuple[Upstream, list[dict[str, str]]]:
        settings = Settings(auth_upstream_issuer=issuer, auth_upstream_client_id="facade")
        made = Upstream(settings, "https://mcp.example.com/oauth/callback")
        sent: list[dict[str, str]] = []
        made.metadata = lambda: {} if grants is None else {"grant_types_supported": grants}  # type: ignore[method-assign]
        made._token = lambda form: sent.append(form) or {"access_token": "t"}  # type: ignore[method-assign,func-returns-value]
        return made, sent

    okta, sent = upstream("https://corp.okta.com", [TOKEN_EXCHANGE, "authorization_code"])
    okta.exchange_token("user-token", "https://orders.example", ["orders:read"])
    assert sent == [
        {
            "grant_type": TOKEN_EXCHANGE,
            "subject_token": "user-token",
            "subject_token_type": "urn:ietf:params:oauth:token-type:access_token",
            "requested_token_type": "urn:ietf:params:oauth:token-type:access_token",
            "audience": "https://orders.example",
            "scope": "orders:read",
        }
    ]
    entra, sent = upstream("https://login.microsoftonline.com/tenant/v2.0", ["authorization_code"])
    entra.exchange_token("user-token", "api://orders", [])
    assert sent[0]["grant_type"] == "urn:ietf:params:oauth:grant-type:jwt-bearer"
    assert sent[0]["requested_token_use"] == "on_behalf_of" and sent[0]["scope"] == "api://orders/.default"
    google, sent = upstream("https://accounts.google.com", ["authorization_code", "refresh_token"])
    with pytest.raises(UpstreamError) as refused:
        google.exchange_token("user-token", "https://orders.example", [])
    assert refused.value.code == "unsupported_grant_type" and sent == []
