"""The authorization facade end to end: MCP clients that know only the server's URL sign in through
`lambda-mcp dev examples/conformance/server.py --lambda --api {http,rest,url}` with `LAMBDA_MCP_AUTH=proxy`,
in front of a real upstream identity provider that has no registration endpoint (npm `oidc-provider`,
tests/support/oidc/upstream.mjs, one confidential client pre-registered for the facade).

Each client starts without a token, gets the 401, discovers the facade, registers (DCR) or names its
client ID metadata document (CIMD), passes the facade's consent page and the upstream's login (over HTTP,
no browser), exchanges the code, calls a tool, refreshes, and calls again: the official Python SDK
(`OAuthClientProvider`) and the official TypeScript SDK, each with DCR and with CIMD. The documents are
served over https on 127.0.0.1 with a certificate from a CA made for the module, which the dev servers
trust through `SSL_CERT_FILE` (the facade verifies the document's certificate as in production; only the
loopback address is a dev and test allowance). One dev server per front door and one upstream serve every
flow of the module.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

import httpx
import pytest

from tests.support.facade_clients import (
    TOOL,
    TOOL_TEXT,
    LoopbackTLS,
    MetadataDocument,
    authorization_server_metadata,
    loopback_redirect_uri,
    loopback_tls,
    python_sdk_flow,
    verified_claims,
)
from tests.support.processes import ServerProcess, free_port, lambda_mcp_dev
from tests.support.ts_sdk import run_ts_client
from tests.support.upstream import SignIn, Upstream, sign_in, upstream_for_ports
from tests.unit.test_facade_http import pkce

pytestmark = pytest.mark.anyio
APP = "examples/conformance/server.py"
APIS = ("http", "rest", "url")
PATHS = {"http": "/mcp", "rest": "/v1/mcp", "url": "/mcp"}


@pytest.fixture(scope="module")
def ports() -> dict[str, int]:
    return {api: free_port() for api in APIS}


@pytest.fixture(scope="module")
def upstream(ports: dict[str, int], tmp_path_factory: pytest.TempPathFactory) -> Iterator[Upstream]:
    yield from upstream_for_ports(ports, tmp_path_factory.mktemp("upstream") / "oidc.log")


@pytest.fixture(scope="module")
def tls(tmp_path_factory: pytest.TempPathFactory) -> LoopbackTLS:
    return loopback_tls(tmp_path_factory.mktemp("tls"))


@pytest.fixture(scope="module", params=APIS)
def server(
    request: pytest.FixtureRequest,
    ports: dict[str, int],
    upstream: Upstream,
    tls: LoopbackTLS,
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[ServerProcess]:
    api: str = request.param
    port, path = ports[api], PATHS[api]
    env = {
        "LAMBDA_MCP_AUTH": "proxy",
        "LAMBDA_MCP_AUTH_AUDIENCE": f"http://127.0.0.1:{port}{path}",
        "LAMBDA_MCP_AUTH_SCOPES": "mcp:tools",
        "SSL_CERT_FILE": str(tls.ca_file),  # the facade's CIMD fetch trusts the module's CA
        "LAMBDA_MCP_AUTH_UPSTREAM_CHECK_SECONDS": "0",  # every refresh asks the upstream too
        **upstream.facade_env(),
    }
    log = tmp_path_factory.mktemp(f"facade-{api}") / "server.log"
    process = lambda_mcp_dev(
        APP, through_lambda=True, env=env, port=port, path=path, log=log, extra_args=["--api", api]
    )
    yield process
    process.stop()


def check_sign_in(sign_in: SignIn, server: ServerProcess, client_id: str, client_name: str) -> None:
    """The authorization request went to the facade for this resource with PKCE S256, and the facade's
    consent page named the client and its redirect host before the user went upstream."""
    request = urlsplit(sign_in.visited[0])
    query = {name: values[0] for name, values in parse_qs(request.query).items()}
    assert request.netloc == urlsplit(server.url).netloc and request.path.endswith("/oauth/authorize")
    assert query["client_id"] == client_id and query["code_challenge_method"] == "S256"
    assert query["resource"] == server.url and "mcp:tools" in query["scope"].split()
    assert client_name in sign_in.consent_page and "127.0.0.1" in sign_in.consent_page
    assert sign_in.query.get("code") and sign_in.query.get("state") == query["state"]


def check_tokens(
    issued: str, refreshed: str, server: ServerProcess, upstream: Upstream, issuer: str, user: str
) -> None:
    """Both access tokens are the facade's own (ES256, its JWKS, aud = the resource), not the upstream's,
    for the user who signed in upstream."""
    metadata = authorization_server_metadata(issuer)
    for token in (issued, refreshed):
        claims = verified_claims(token, metadata, server.url)
        assert claims["iss"] != upstream.issuer and user in claims["sub"]
        assert "mcp:tools" in str(claims.get("scope", "")).split()
    assert issued != refreshed


async def test_python_sdk_registers_signs_in_calls_refreshes_and_calls_again(
    server: ServerProcess, upstream: Upstream
) -> None:
    assert httpx.post(server.url, json={}).status_code == 401  # the client starts without a token
    flow = await python_sdk_flow(server.url, "lambda-mcp e2e python", mode="legacy")
    assert flow.texts == [TOOL_TEXT, TOOL_TEXT]
    assert flow.storage.client is not None and not flow.storage.client.client_id.startswith("http")  # DCR
    (first,) = flow.user.sign_ins  # one authorization: the refresh needed no user
    check_sign_in(first, server, flow.storage.client.client_id, "lambda-mcp e2e python")
    check_tokens(
        flow.issued.access_token, flow.refreshed.access_token, server, upstream, flow.authorization_server, "alice"
    )
    metadata = authorization_server_metadata(flow.authorization_server)
    assert metadata["registration_endpoint"] and metadata["client_id_metadata_document_supported"] is True
    assert metadata["code_challenge_methods_supported"] == ["S256"]

    # The refresh rotated the refresh token. Presenting the old one again at once (a retry after a lost answer)
    # gets the same successor; once the successor was used, the old one again revokes the whole family.
    assert flow.issued.refresh_token and flow.refreshed.refresh_token
    assert flow.issued.refresh_token != flow.refreshed.refresh_token
    client = {"client_id": flow.storage.client.client_id}

    def refresh(token: str) -> httpx.Response:
        return httpx.post(
            metadata["token_endpoint"], data={"grant_type": "refresh_token", "refresh_token": token, **client}
        )

    retried = refresh(flow.issued.refresh_token)
    assert retried.status_code == 200 and retried.json()["refresh_token"] == flow.refreshed.refresh_token
    following = refresh(flow.refreshed.refresh_token)
    assert following.status_code == 200, following.text
    for token in (flow.issued.refresh_token, following.json()["refresh_token"]):
        reused = refresh(token)
        assert reused.status_code == 400 and reused.json()["error"] == "invalid_grant", reused.text


async def test_the_python_sdk_signs_in_with_its_metadata_document(
    server: ServerProcess, upstream: Upstream, tls: LoopbackTLS
) -> None:
    redirect_uri = loopback_redirect_uri()
    document = MetadataDocument("lambda-mcp e2e cimd", redirect_uri, tls)
    try:
        flow = await python_sdk_flow(
            server.url,
            "ignored: the document names it",
            mode="2026-07-28",
            redirect_uri=redirect_uri,
            cimd_url=document.url,
        )
    finally:
        document.stop()
    assert flow.texts == [TOOL_TEXT, TOOL_TEXT]
    assert flow.storage.client is not None and flow.storage.client.client_id == document.url  # no registration
    assert document.fetches >= 1  # the facade read the document
    (first,) = flow.user.sign_ins
    check_sign_in(first, server, document.url, "lambda-mcp e2e cimd")
    check_tokens(
        flow.issued.access_token, flow.refreshed.access_token, server, upstream, flow.authorization_server, "alice"
    )
    assert flow.issued.refresh_token != flow.refreshed.refresh_token


def typescript_flow(
    server: ServerProcess, upstream: Upstream, redirect_uri: str, client_name: str, client_metadata_url: str = ""
) -> tuple[dict[str, Any], dict[str, Any]]:
    """The TypeScript SDK signs in as carol (DCR, or CIMD with `client_metadata_url`), calls the tool,
    refreshes and calls again; checked as every flow is. Its report and the facade's metadata."""
    sign_ins: list[SignIn] = []

    def authorize(url: str) -> str:
        sign_ins.append(sign_in(url, redirect_uri=redirect_uri, user="carol"))
        return sign_ins[-1].location

    done = run_ts_client(server.url, redirect_uri, TOOL, authorize, client_metadata_url=client_metadata_url)
    assert done["before"] == TOOL_TEXT and done["after"] == TOOL_TEXT
    assert done["authorizations"] == 1 and done["refreshes"] == 1  # the 401 was answered by a refresh
    assert "id_token" not in done["issued"]["keys"]  # the upstream's tokens stay in the facade
    (first,) = sign_ins
    check_sign_in(first, server, done["client_id"], client_name)
    issuer = done["issued"]["issuer"]  # the authorization server the SDK discovered and bound its tokens to
    check_tokens(done["issued"]["access_token"], done["refreshed"]["access_token"], server, upstream, issuer, "carol")
    assert done["issued"]["refresh_token"] != done["refreshed"]["refresh_token"]
    return done, authorization_server_metadata(issuer)


def test_the_typescript_sdk_registers_signs_in_calls_refreshes_and_calls_again(
    server: ServerProcess, upstream: Upstream
) -> None:
    done, metadata = typescript_flow(server, upstream, loopback_redirect_uri(), "lambda-mcp e2e typescript")
    assert not done["client_id"].startswith("http")  # registered dynamically
    assert f"POST {metadata['registration_endpoint']}" in done["requests"]


def test_the_typescript_sdk_signs_in_with_its_metadata_document(
    server: ServerProcess, upstream: Upstream, tls: LoopbackTLS
) -> None:
    redirect_uri = loopback_redirect_uri()
    document = MetadataDocument("lambda-mcp e2e typescript cimd", redirect_uri, tls)
    try:
        done, metadata = typescript_flow(
            server, upstream, redirect_uri, "lambda-mcp e2e typescript cimd", client_metadata_url=document.url
        )
    finally:
        document.stop()
    assert done["client_id"] == document.url and document.fetches >= 1  # the facade read the document
    assert not any(request.endswith(metadata["registration_endpoint"]) for request in done["requests"])
    assert any(request.startswith(f"POST {metadata['token_endpoint']}") for request in done["requests"])


def test_a_user_disabled_at_the_upstream_is_refused_at_the_next_refresh(
    server: ServerProcess, upstream: Upstream
) -> None:
    """The facade keeps the upstream's refresh token (sealed) and, its check being due at every refresh here,
    refreshes upstream too: the real upstream's `invalid_grant` for a disabled account ends the sign-in."""
    metadata = authorization_server_metadata(server.url.rsplit("/mcp", 1)[0])
    redirect_uri, user = loopback_redirect_uri(), f"dave-{urlsplit(server.url).port}"
    registered = httpx.post(
        metadata["registration_endpoint"], json={"redirect_uris": [redirect_uri], "token_endpoint_auth_method": "none"}
    )
    client_id = registered.json()["client_id"]
    verifier = "v" * 64
    query = {
        "response_type": "code",
        "client_id": client_id,
        "redirect_uri": redirect_uri,
        "code_challenge": pkce(verifier),
        "code_challenge_method": "S256",
        "resource": server.url,
        "state": "s",
    }
    signed = sign_in(f"{metadata['authorization_endpoint']}?{urlencode(query)}", redirect_uri=redirect_uri, user=user)
    form = {"client_id": client_id, "redirect_uri": redirect_uri, "code_verifier": verifier}
    tokens = httpx.post(
        metadata["token_endpoint"], data={**form, "grant_type": "authorization_code", "code": signed.query["code"]}
    ).json()

    def refresh(token: str) -> httpx.Response:
        form = {"grant_type": "refresh_token", "refresh_token": token, "client_id": client_id}
        return httpx.post(metadata["token_endpoint"], data=form)

    refreshed = refresh(tokens["refresh_token"])
    assert refreshed.status_code == 200, refreshed.text  # the upstream still signs the user in
    upstream.disable(user)
    refused = refresh(refreshed.json()["refresh_token"])
    assert refused.status_code == 400 and refused.json()["error"] == "invalid_grant"
