"""The authorization facade over HTTP, in process: the whole flow and every refusal the issue lists, with a
fake upstream (an object standing in for the OpenID provider: it approves whoever it is told to)."""

from __future__ import annotations

import base64
import hashlib
import json
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx
import jwt
import pytest

from lambda_mcp.config import Settings
from lambda_mcp.facade.signing import generate_pem
from lambda_mcp.kit import Stores, build_kit
from lambda_mcp.loader import load_app

BASE = "http://127.0.0.1:8000"
RESOURCE = BASE + "/mcp"
REDIRECT = "http://127.0.0.1:9999/callback"
PEM = generate_pem()
pytestmark = pytest.mark.anyio


@dataclass
class FakeUpstream:
    """Stands in for the upstream: its authorize URL echoes state; its code says who signed in; its refresh
    token names the user, and refreshing it fails (`invalid_grant`) once the user is in `disabled`."""

    user: str = "alice"
    exchanged: list[str] = field(default_factory=list)
    refreshed: list[str] = field(default_factory=list)
    disabled: set[str] = field(default_factory=set)
    claims: dict[str, dict[str, Any]] = field(default_factory=dict)
    """Extra identity claims per user."""
    unreachable: bool = False

    def authorize_url(self, state: str, challenge: str, nonce: str) -> str:
        return f"https://idp.example/authorize?state={state}&code_challenge={challenge}&nonce={nonce}"

    def exchange(self, code: str, verifier: str) -> dict[str, Any]:
        self.exchanged.append(code)
        return {"access_token": "upstream-secret-token", "id_token": "x", "user": code, "refresh_token": f"up:{code}"}

    def refresh(self, refresh_token: str) -> dict[str, Any]:
        from lambda_mcp.facade.upstream import UpstreamError

        self.refreshed.append(refresh_token)
        user = refresh_token.split(":")[1]
        if self.unreachable:
            raise UpstreamError("could not reach the upstream")
        if user in self.disabled:
            raise UpstreamError("the upstream answered 400", "invalid_grant")
        return {
            "access_token": "upstream-secret-token",
            "user": user,
            "refresh_token": f"up:{user}:{len(self.refreshed)}",
        }

    async def identity(self, tokens: dict[str, Any], nonce: str | None, subject: str | None = None) -> dict[str, Any]:
        user = str(tokens["user"])
        return {"sub": user, **self.claims.get(user, {})}

    async def subject(self, tokens: dict[str, Any], nonce: str) -> str:
        """What the facade asked of its upstream before it read claims (kept to run these tests against it)."""
        return str((await self.identity(tokens, nonce))["sub"])


def settings(**extra: str) -> Settings:
    env = {
        "LAMBDA_MCP_AUTH": "proxy",
        "LAMBDA_MCP_AUTH_AUDIENCE": RESOURCE,
        "LAMBDA_MCP_AUTH_UPSTREAM_ISSUER": "https://idp.example",
        "LAMBDA_MCP_AUTH_UPSTREAM_CLIENT_ID": "facade",
        "LAMBDA_MCP_AUTH_UPSTREAM_CLIENT_SECRET": "s3cret",
        "LAMBDA_MCP_AUTH_SCOPES": "mcp:tools",
        "LAMBDA_MCP_AUTH_SIGNING_KEY": PEM,
        **extra,
    }
    return Settings.from_env(env)


@dataclass
class Rig:
    http: httpx.AsyncClient
    upstream: FakeUpstream
    kit: Any

    async def register(self, **metadata: Any) -> dict[str, Any]:
        body = {"redirect_uris": [REDIRECT], "client_name": "Test Client", "token_endpoint_auth_method": "none"}
        response = await self.http.post("/oauth/register", json={**body, **metadata})
        assert response.status_code == 201, response.text
        return dict(response.json())

    async def authorize(self, client_id: str, **overrides: str) -> httpx.Response:
        verifier = overrides.pop("verifier", "v" * 50)
        params = {
            "response_type": "code",
            "client_id": client_id,
            "redirect_uri": REDIRECT,
            "code_challenge": pkce(verifier),
            "code_challenge_method": "S256",
            "state": "st-1",
            "resource": RESOURCE,
            "scope": "mcp:tools",
            **overrides,
        }
        return await self.http.get("/oauth/authorize", params={k: v for k, v in params.items() if v != "-"})

    async def consent(self, page: httpx.Response, decision: str = "approve") -> httpx.Response:
        txn = txn_of(page.text)
        return await self.http.post("/oauth/consent", data={"txn": txn, "decision": decision, "confirm": "yes"})

    async def code(self, client_id: str, user: str = "alice", verifier: str = "v" * 50) -> str:
        page = await self.authorize(client_id, verifier=verifier)
        if page.status_code == 302:  # this browser's user approved the client before
            return await self.callback(page, user)
        assert page.status_code == 200, page.text
        return await self.callback(await self.consent(page), user)

    async def callback(self, upstream: httpx.Response, user: str = "alice") -> str:
        assert upstream.status_code == 302 and upstream.headers["location"].startswith("https://idp.example/")
        state = query(upstream.headers["location"])["state"]
        back = await self.http.get("/oauth/callback", params={"code": user, "state": state})
        assert back.status_code == 302, back.text
        found = query(back.headers["location"])
        assert found["state"] == "st-1" and found["iss"] == BASE
        return found["code"]

    async def exchange(self, client_id: str, code: str, verifier: str = "v" * 50, **extra: str) -> httpx.Response:
        form = {"grant_type": "authorization_code", "code": code, "client_id": client_id, "redirect_uri": REDIRECT}
        return await self.http.post("/oauth/token", data={**form, "code_verifier": verifier, **extra})


def pkce(verifier: str) -> str:
    return base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()


def txn_of(html: str) -> str:
    marker = 'name="txn" value="'
    assert marker in html, html
    return html.split(marker, 1)[1].split('"', 1)[0]


def query(url: str) -> dict[str, str]:
    return {k: v[0] for k, v in parse_qs(urlsplit(url).query).items()}


@pytest.fixture
async def rig() -> AsyncIterator[Rig]:
    kit = build_kit(load_app("tests/apps/scoped.py"), settings(), streaming=True, local=True, stores=Stores.memory())
    upstream = FakeUpstream()
    assert kit.facade is not None
    kit.facade.upstream = upstream  # type: ignore[assignment]
    transport = httpx.ASGITransport(app=kit.asgi())
    async with httpx.AsyncClient(transport=transport, base_url=BASE) as http:
        yield Rig(http, upstream, kit)


async def test_metadata_advertises_the_facade(rig: Rig) -> None:
    document = (await rig.http.get("/.well-known/oauth-authorization-server")).json()
    assert document["issuer"] == BASE
    assert document["registration_endpoint"] == BASE + "/oauth/register"
    assert document["client_id_metadata_document_supported"] is True
    assert document["code_challenge_methods_supported"] == ["S256"]
    resource = (await rig.http.get("/.well-known/oauth-protected-resource/mcp")).json()
    assert resource["authorization_servers"] == [BASE] and resource["resource"] == RESOURCE
    keys = (await rig.http.get("/oauth/jwks")).json()["keys"]
    assert keys[0]["kty"] == "EC" and keys[0]["alg"] == "ES256"


async def test_a_registered_client_signs_in_calls_a_tool_and_refreshes(rig: Rig) -> None:
    unauthenticated = await rig.http.post("/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "ping"})
    assert unauthenticated.status_code == 401
    client = await rig.register()
    page = await rig.authorize(client["client_id"])
    assert page.status_code == 200
    assert "Test Client" in page.text and "127.0.0.1:9999" in page.text
    assert '<form method="post" action="/oauth/consent">' in page.text
    assert (
        page.headers["x-frame-options"] == "DENY"
        and "frame-ancestors 'none'" in page.headers["content-security-policy"]
    )
    assert page.headers["cache-control"] == "no-store"
    code = await rig.callback(await rig.consent(page))
    tokens = (await rig.exchange(client["client_id"], code)).json()
    assert "upstream-secret-token" not in json.dumps(tokens)
    claims = jwt.decode(tokens["access_token"], options={"verify_signature": False})
    assert claims["aud"] == RESOURCE and claims["iss"] == BASE and claims["sub"] == "alice"
    assert claims["scope"] == "mcp:tools" and claims["exp"] - claims["iat"] == 3600
    assert await whoami(rig, tokens["access_token"]) == f"{BASE}#alice"
    refreshed = await rig.http.post(
        "/oauth/token",
        data={
            "grant_type": "refresh_token",
            "refresh_token": tokens["refresh_token"],
            "client_id": client["client_id"],
        },
    )
    assert refreshed.status_code == 200, refreshed.text
    again = refreshed.json()
    assert again["refresh_token"] != tokens["refresh_token"]
    assert await whoami(rig, again["access_token"]) == f"{BASE}#alice"


async def whoami(rig: Rig, token: str) -> str:
    headers = {"Authorization": f"Bearer {token}", "Accept": "application/json, text/event-stream"}
    init = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
    }
    response = await rig.http.post("/mcp", json=init, headers=headers)
    assert response.status_code == 200, response.text
    session = response.headers.get("mcp-session-id")
    if session:
        headers["mcp-session-id"] = session
        headers["mcp-protocol-version"] = "2025-06-18"
    await rig.http.post("/mcp", json={"jsonrpc": "2.0", "method": "notifications/initialized"}, headers=headers)
    call = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "whoami", "arguments": {}}}
    response = await rig.http.post("/mcp", json=call, headers=headers)
    assert response.status_code == 200, response.text
    text = response.text
    if text.startswith("event:") or text.startswith("data:") or "\ndata:" in text:
        text = next(line[5:].strip() for line in text.splitlines() if line.startswith("data:"))
    result = json.loads(text)["result"]
    return str(json.loads(result["content"][0]["text"])["principal"])


# -- refusals at /authorize -------------------------------------------------------------------------------
async def test_an_unknown_client_gets_an_error_page_not_a_redirect(rig: Rig) -> None:
    page = await rig.authorize("mcp-nobody")
    assert page.status_code == 400 and "location" not in page.headers
    assert "Unknown application" in page.text and page.headers["x-frame-options"] == "DENY"


async def test_a_redirect_uri_mismatch_gets_an_error_page_not_a_redirect(rig: Rig) -> None:
    client = await rig.register()
    for wrong in ("http://127.0.0.1:9999/other", "https://evil.example/callback", REDIRECT + "?x=1"):
        page = await rig.authorize(client["client_id"], redirect_uri=wrong)
        assert page.status_code == 400 and "location" not in page.headers, wrong
        assert "redirect" in page.text.lower()


async def test_a_loopback_redirect_matches_on_any_port(rig: Rig) -> None:
    client = await rig.register()
    page = await rig.authorize(client["client_id"], redirect_uri="http://127.0.0.1:41234/callback")
    assert page.status_code == 200 and "127.0.0.1:41234" in page.text


@pytest.mark.parametrize(
    ("overrides", "shown"),
    [
        ({"code_challenge": "-", "code_challenge_method": "-"}, "PKCE is required"),
        ({"code_challenge_method": "plain"}, "S256"),
        ({"code_challenge_method": "-"}, "S256"),
        ({"resource": "https://other.example/mcp"}, "resource"),
        ({"resource": "-"}, "resource"),
        ({"scope": "unknown:scope"}, "scope"),
        ({"response_type": "token"}, "response_type"),
        ({"state": "s" * 1025}, "state"),
    ],
)
async def test_a_bad_request_is_an_error_page_never_a_redirect(rig: Rig, overrides: dict[str, str], shown: str) -> None:
    client = await rig.register()
    response = await rig.authorize(client["client_id"], **overrides)
    assert response.status_code == 400 and "location" not in response.headers
    assert shown in response.text and response.headers["x-frame-options"] == "DENY"


async def test_offline_access_is_accepted_and_not_granted_as_a_scope(rig: Rig) -> None:
    client = await rig.register()
    page = await rig.authorize(client["client_id"], scope="mcp:tools offline_access")
    assert page.status_code == 200 and "offline_access" not in page.text
    tokens = (await rig.exchange(client["client_id"], await rig.callback(await rig.consent(page)))).json()
    assert tokens["scope"] == "mcp:tools" and tokens["refresh_token"]


async def test_deny_returns_access_denied_to_the_client(rig: Rig) -> None:
    client = await rig.register()
    page = await rig.authorize(client["client_id"])
    denied = await rig.consent(page, "deny")
    assert denied.status_code == 302
    assert query(denied.headers["location"]) | {"error_description": ""} == {
        "error": "access_denied",
        "state": "st-1",
        "iss": BASE,
        "error_description": "",
    }
    again = await rig.consent(page, "approve")  # the pending authorization is gone
    assert again.status_code == 400


async def test_consent_from_another_browser_is_refused(rig: Rig) -> None:
    client = await rig.register()
    page = await rig.authorize(client["client_id"])
    transport = httpx.ASGITransport(app=rig.kit.asgi())
    async with httpx.AsyncClient(transport=transport, base_url=BASE) as other:  # no lmcp_browser cookie
        forged = await other.post(
            "/oauth/consent", data={"txn": txn_of(page.text), "decision": "approve", "confirm": "yes"}
        )
    assert forged.status_code == 400 and "location" not in forged.headers


WEB = "https://client.example/callback"
"""A web client's redirect URI: the only kind whose consent is remembered."""


async def test_a_remembered_consent_skips_the_page_for_the_same_user_and_redirect(rig: Rig) -> None:
    client = await rig.register(redirect_uris=[WEB, REDIRECT])
    page = await rig.authorize(client["client_id"], redirect_uri=WEB)
    code = query(
        (
            await rig.http.get(
                "/oauth/callback", params={"code": "alice", "state": _upstream_state(await rig.consent(page))}
            )
        ).headers["location"]
    )
    assert code["code"]
    second = await rig.authorize(client["client_id"], redirect_uri=WEB)
    assert second.status_code == 302 and second.headers["location"].startswith("https://idp.example/")
    back = await rig.http.get("/oauth/callback", params={"code": "alice", "state": _upstream_state(second)})
    assert back.status_code == 302 and query(back.headers["location"])["code"]  # alice approved it: a code at once


def _upstream_state(response: httpx.Response) -> str:
    assert response.status_code == 302 and response.headers["location"].startswith("https://idp.example/")
    return query(response.headers["location"])["state"]


async def test_a_remembered_consent_of_another_user_asks_again(rig: Rig) -> None:
    client = await rig.register(redirect_uris=[WEB])
    page = await rig.authorize(client["client_id"], redirect_uri=WEB)
    await rig.http.get("/oauth/callback", params={"code": "alice", "state": _upstream_state(await rig.consent(page))})
    second = await rig.authorize(client["client_id"], redirect_uri=WEB)
    page = await rig.http.get("/oauth/callback", params={"code": "mallory", "state": _upstream_state(second)})
    assert page.status_code == 200 and 'name="txn"' in page.text  # mallory never approved it: the page again
    approved = await rig.consent(page)
    assert approved.status_code == 302 and "code" in query(approved.headers["location"])


# -- refusals at /token ------------------------------------------------------------------------------------
async def test_a_code_works_once(rig: Rig) -> None:
    client = await rig.register()
    code = await rig.code(client["client_id"])
    assert (await rig.exchange(client["client_id"], code)).status_code == 200
    again = await rig.exchange(client["client_id"], code)
    assert again.status_code == 400 and again.json()["error"] == "invalid_grant"
    assert again.headers["cache-control"] == "no-store"


async def test_a_code_of_another_client_is_refused(rig: Rig) -> None:
    ours, theirs = await rig.register(), await rig.register()
    code = await rig.code(ours["client_id"])
    stolen = await rig.exchange(theirs["client_id"], code)
    assert stolen.status_code == 400 and stolen.json()["error"] == "invalid_grant"
    assert (await rig.exchange(ours["client_id"], code)).status_code == 200  # another client cannot spend it


async def test_a_wrong_verifier_redirect_or_resource_is_refused(rig: Rig) -> None:
    client = await rig.register()
    cases = [({"verifier": "w" * 50}, "invalid_grant"), ({"redirect_uri": "http://127.0.0.1:1/x"}, "invalid_grant")]
    cases.append(({"resource": "https://other.example/mcp"}, "invalid_target"))
    for extra, error in cases:
        code = await rig.code(client["client_id"])
        verifier = extra.pop("verifier", "v" * 50)
        refused = await rig.exchange(client["client_id"], code, verifier, **extra)
        assert refused.status_code == 400 and refused.json()["error"] == error, extra


async def test_a_reused_refresh_token_revokes_the_family(rig: Rig) -> None:
    client = await rig.register()
    tokens = (await rig.exchange(client["client_id"], await rig.code(client["client_id"]))).json()

    async def refresh(token: str) -> httpx.Response:
        form = {"grant_type": "refresh_token", "refresh_token": token, "client_id": client["client_id"]}
        return await rig.http.post("/oauth/token", data=form)

    first = await refresh(tokens["refresh_token"])
    assert first.status_code == 200
    second = await refresh(first.json()["refresh_token"])  # the successor used: the leeway of the first is over
    assert second.status_code == 200
    reused = await refresh(tokens["refresh_token"])
    assert reused.status_code == 400 and reused.json()["error"] == "invalid_grant"
    revoked = await refresh(second.json()["refresh_token"])  # the thief's replay cost the client its family
    assert revoked.status_code == 400 and revoked.json()["error"] == "invalid_grant"


async def test_a_confidential_client_must_authenticate(rig: Rig) -> None:
    client = await rig.register(token_endpoint_auth_method="client_secret_basic")
    code = await rig.code(client["client_id"])
    form = {"grant_type": "authorization_code", "code": code, "redirect_uri": REDIRECT, "code_verifier": "v" * 50}
    wrong = await rig.http.post("/oauth/token", data=form, auth=(client["client_id"], "guess"))
    assert wrong.status_code == 401 and wrong.json()["error"] == "invalid_client"
    code = await rig.code(client["client_id"])
    right = await rig.http.post(
        "/oauth/token", data={**form, "code": code}, auth=(client["client_id"], client["client_secret"])
    )
    assert right.status_code == 200, right.text


async def test_an_unknown_grant_type_is_an_rfc6749_error(rig: Rig) -> None:
    client = await rig.register()
    answer = await rig.http.post("/oauth/token", data={"grant_type": "password", "client_id": client["client_id"]})
    assert answer.status_code == 400 and set(answer.json()) == {"error", "error_description"}
    assert answer.json()["error"] == "unsupported_grant_type"


# -- registration ------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "metadata",
    [
        {"redirect_uris": []},
        {"redirect_uris": ["http://evil.example/cb"]},
        {"redirect_uris": ["javascript:alert(1)"]},
        {"redirect_uris": ["https://ok.example/cb#frag"]},
        {"redirect_uris": [f"http://127.0.0.1/{i}" for i in range(11)]},
        {"redirect_uris": [REDIRECT], "client_name": "x" * 9000},
        {"redirect_uris": [REDIRECT], "grant_types": ["client_credentials"]},
        {"redirect_uris": [REDIRECT], "token_endpoint_auth_method": "private_key_jwt"},
    ],
)
async def test_bad_registrations_are_refused(rig: Rig, metadata: dict[str, Any]) -> None:
    answer = await rig.http.post("/oauth/register", json=metadata)
    assert answer.status_code == 400
    assert answer.json()["error"] in ("invalid_redirect_uri", "invalid_client_metadata")


async def test_a_registration_flood_is_bounded() -> None:
    kit = build_kit(load_app("tests/apps/scoped.py"), settings(), streaming=True, local=True, stores=Stores.memory())
    assert kit.facade is not None
    kit.facade.limits.limits["register:ip"] = 3
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=kit.asgi()), base_url=BASE) as http:
        answers = [await http.post("/oauth/register", json={"redirect_uris": [REDIRECT]}) for _ in range(5)]
    assert [a.status_code for a in answers] == [201, 201, 201, 429, 429]
    assert answers[-1].json()["error"] == "temporarily_unavailable" and answers[-1].headers["retry-after"]


# -- the facade's tokens at /mcp -----------------------------------------------------------------------------
async def test_mcp_refuses_tokens_the_facade_did_not_issue_for_it(rig: Rig) -> None:
    from lambda_mcp.facade.signing import LocalSigner, mint

    own = LocalSigner(PEM)
    other = LocalSigner(generate_pem())
    now = int(time.time())
    good = {"iss": BASE, "aud": RESOURCE, "sub": "alice", "scope": "mcp:tools", "iat": now, "exp": now + 60}
    for signer, claims in (
        (other, good),
        (own, {**good, "aud": "https://other.example/mcp"}),
        (own, {**good, "iss": "https://idp.example"}),
        (own, {**good, "exp": now - 120}),
    ):
        token = mint(signer, claims)
        answer = await rig.http.post(
            "/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "ping"}, headers={"Authorization": f"Bearer {token}"}
        )
        assert answer.status_code == 401, claims
        assert (
            f'resource_metadata="{BASE}/.well-known/oauth-protected-resource/mcp"' in answer.headers["www-authenticate"]
        )
    token = mint(own, good)
    assert await whoami(rig, token) == f"{BASE}#alice"


async def test_oversized_bodies_are_refused_without_being_read_whole(rig: Rig) -> None:
    async def chunks(size: int) -> Any:
        for _ in range(size // 4096):
            yield b"a" * 4096

    big_registration = await rig.http.post("/oauth/register", content=chunks(64 * 1024))
    assert big_registration.status_code == 400
    assert big_registration.json()["error"] == "invalid_client_metadata"
    big_token = await rig.http.post("/oauth/token", content=chunks(64 * 1024))
    assert big_token.status_code == 400 and big_token.json()["error"] == "invalid_request"
    big_consent = await rig.http.post("/oauth/consent", content=chunks(16 * 1024))
    assert big_consent.status_code == 413
