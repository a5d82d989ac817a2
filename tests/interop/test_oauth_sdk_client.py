"""End to end OAuth: the official Python SDK client's own OAuth support against the kit's resource server.

A real authorization server (npm `oidc-provider`, started here like DynamoDB Local) and
`lambda-mcp dev examples/conformance/server.py --lambda` with `LAMBDA_MCP_AUTH=jwt` pointed at it. The
SDK client (`mcp.client.auth.OAuthClientProvider`) starts without a token, gets the 401, reads the
protected resource metadata, registers dynamically, completes authorization code + PKCE (login and
consent are HTML forms, submitted over HTTP: no browser) for the server's URL as the resource, then
calls a tool, once on each era.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import parse_qs, urljoin, urlsplit

import anyio
import httpx
import httpx2
import pytest
from mcp import Client
from mcp.client.auth import AuthorizationCodeResult, OAuthClientProvider
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.auth import OAuthClientMetadata

from tests.support.facade_clients import MemoryTokens
from tests.support.processes import ServerProcess, free_port, lambda_mcp_dev
from tests.support.upstream import oidc_server

pytestmark = pytest.mark.anyio
REDIRECT_URI = "http://127.0.0.1:33418/callback"  # nothing listens: the test reads the redirect itself
_FORM = re.compile(r'<form[^>]*action="([^"]+)"[^>]*method="post"', re.I)
_PROMPT = re.compile(r'name="prompt" value="([a-z]+)"', re.I)


def start_authorization_server(log: Path) -> tuple[ServerProcess, str]:
    """`oidc-provider` on 127.0.0.1 (Node 22 from the conformance harness); returns it and its issuer URL."""
    port = free_port()
    return oidc_server("authorization_server.mjs", port, [], log), f"http://127.0.0.1:{port}"


def log_in(authorization_url: str, user: str) -> str:
    """Follow the authorization request through oidc-provider's login and consent forms; return the
    redirect to the client (with `code`, `state` and `iss`)."""
    issuer = urlsplit(authorization_url).netloc
    with httpx.Client(follow_redirects=False, timeout=10) as browser:
        response = browser.get(authorization_url)
        for _ in range(20):
            if response.is_redirect:
                location = urljoin(str(response.url), response.headers["location"])
                if urlsplit(location).netloc != issuer:
                    return location
                response = browser.get(location)
                continue
            form, prompt = _FORM.search(response.text), _PROMPT.search(response.text)
            assert form and prompt, response.text[:1000]
            action = urljoin(str(response.url), form.group(1).replace("&amp;", "&"))
            fields = {"prompt": "login", "login": user, "password": "pw"} if prompt.group(1) == "login" else {}
            response = browser.post(action, data=fields or {"prompt": prompt.group(1)})
    raise AssertionError("the authorization flow did not return to the client")


class HeadlessUser:
    """The SDK's redirect and callback handlers, logging in over HTTP as `user`."""

    def __init__(self, user: str) -> None:
        self.user = user
        self.requests: list[str] = []
        self.callback = ""

    async def redirect(self, authorization_url: str) -> None:
        self.requests.append(authorization_url)
        self.callback = await anyio.to_thread.run_sync(log_in, authorization_url, self.user)

    async def answer(self) -> AuthorizationCodeResult:
        query = parse_qs(urlsplit(self.callback).query)
        assert "error" not in query, query
        return AuthorizationCodeResult(code=query["code"][0], state=query["state"][0], iss=query["iss"][0])


@pytest.fixture(scope="module")
def authorization_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    process, issuer = start_authorization_server(tmp_path_factory.mktemp("oidc") / "oidc.log")
    yield issuer
    process.stop()


@pytest.fixture(scope="module")
def mcp_server(authorization_server: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    port = free_port()
    env = {
        "LAMBDA_MCP_AUTH": "jwt",
        "LAMBDA_MCP_AUTH_ISSUER": authorization_server,
        "LAMBDA_MCP_AUTH_AUDIENCE": f"http://127.0.0.1:{port}/mcp",
        "LAMBDA_MCP_AUTH_SCOPES": "mcp:tools",
    }
    log = tmp_path_factory.mktemp("oauth-mcp") / "server.log"
    process = lambda_mcp_dev("examples/conformance/server.py", through_lambda=True, env=env, port=port, log=log)
    yield process
    process.stop()


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
async def test_the_sdk_client_discovers_registers_logs_in_and_calls_a_tool(
    mcp_server: ServerProcess, authorization_server: str, mode: str
) -> None:
    assert httpx.post(mcp_server.url, json={}).status_code == 401  # the client starts without a token
    user, storage = HeadlessUser("alice"), MemoryTokens()
    provider = OAuthClientProvider(
        server_url=mcp_server.url,
        client_metadata=OAuthClientMetadata(
            client_name="lambda-mcp oauth test", redirect_uris=[REDIRECT_URI], token_endpoint_auth_method="none"
        ),
        storage=storage,
        redirect_handler=user.redirect,
        callback_handler=user.answer,
    )
    with anyio.fail_after(60):
        async with (
            httpx2.AsyncClient(auth=provider, timeout=20) as http,
            Client(streamable_http_client(mcp_server.url, http_client=http), mode=mode) as client,
        ):
            result = await client.call_tool("test_simple_text", {})
            negotiated = client.session.protocol_version
    assert result.content[0].text == "This is a simple text response for testing."  # type: ignore[union-attr]
    assert negotiated == ("2025-11-25" if mode == "legacy" else "2026-07-28")
    (request,) = user.requests  # one authorization: the token then served every request
    query = parse_qs(urlsplit(request).query)
    assert request.startswith(f"{authorization_server}/auth?")
    assert query["resource"] == [mcp_server.url] and query["code_challenge_method"] == ["S256"]
    assert "mcp:tools" in query["scope"][0].split()
    assert storage.client is not None and storage.client.client_id  # dynamically registered
    assert storage.tokens is not None and "mcp:tools" in (storage.tokens.scope or "").split()
