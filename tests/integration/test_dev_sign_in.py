"""Local sign-in in one command (issue 34): `LAMBDA_MCP_AUTH=proxy lambda-mcp dev APP`, with no other
setting, serves the authorization facade with its own URL as the audience and the development sign-in
(local/idp.py) as the upstream, on the same port. The official Python SDK's OAuth client registers, is
sent through the facade's consent page and the sign-in's login page (walked over HTTP as a browser would:
tests/support/upstream.py `sign_in`), exchanges the code, calls a tool, refreshes and calls again; on the
streaming dev server and through the Lambda handlers (`--lambda`, HTTP API and REST API)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest

from tests.support.facade_clients import (
    TOOL_TEXT,
    authorization_server_metadata,
    loopback_redirect_uri,
    python_sdk_flow,
    verified_claims,
)
from tests.support.processes import ServerProcess, free_port, lambda_mcp_dev

pytestmark = pytest.mark.anyio
APP = "examples/conformance/server.py"
SERVERS = {
    "streaming": ([], "/mcp"),
    "lambda-http": (["--lambda"], "/mcp"),
    "lambda-rest": (["--lambda", "--api", "rest"], "/v1/mcp"),
}


@pytest.fixture
def only_proxy(monkeypatch: pytest.MonkeyPatch) -> None:
    """No `LAMBDA_MCP_*` setting reaches the dev server but `LAMBDA_MCP_AUTH=proxy`."""
    for name in [name for name in os.environ if name.startswith("LAMBDA_MCP_")]:
        monkeypatch.delenv(name)


def start(tmp_path: Path, kind: str, **env: str) -> ServerProcess:
    args, path = SERVERS[kind]
    port = free_port()
    through_lambda = "--lambda" in args
    return lambda_mcp_dev(
        APP,
        through_lambda=through_lambda,
        env={"LAMBDA_MCP_AUTH": "proxy", **env},
        port=port,
        path=path,
        log=tmp_path / f"{kind}.log",
        extra_args=[arg for arg in args if arg != "--lambda"],
    )


@pytest.fixture
def servers() -> Iterator[list[ServerProcess]]:
    started: list[ServerProcess] = []
    yield started
    for server in started:
        server.stop()


@pytest.mark.parametrize("kind", SERVERS)
async def test_the_python_sdk_signs_in_with_nothing_set_but_auth_proxy(
    only_proxy: None, tmp_path: Path, servers: list[ServerProcess], kind: str
) -> None:
    server = start(tmp_path, kind)
    servers.append(server)
    origin = f"http://127.0.0.1:{server.port}"
    assert httpx.post(server.url, json={}).status_code == 401  # the facade guards /mcp
    flow = await python_sdk_flow(server.url, "dev sign-in", mode="legacy" if kind == "streaming" else "2026-07-28")
    assert flow.texts == [TOOL_TEXT, TOOL_TEXT]
    (walked,) = flow.user.sign_ins  # one sign-in; the refresh needed no user
    assert "Allow access to" in walked.consent_page  # the facade's own consent page came first
    login = [url for url in walked.visited if urlsplit(url).path == "/_dev/idp/authorize"]
    assert login and login[0].startswith(origin)  # then the development sign-in, on the dev server's own port
    upstream = {name: values[0] for name, values in parse_qs(urlsplit(login[0]).query).items()}
    assert upstream["code_challenge_method"] == "S256" and upstream["client_id"] == "lambda-mcp-dev"
    assert upstream["redirect_uri"] == server.url.removesuffix("/mcp") + "/oauth/callback"
    metadata = authorization_server_metadata(flow.authorization_server)
    assert metadata["issuer"] == server.url.removesuffix("/mcp")  # the audience: the dev server's own URL
    for token in (flow.issued.access_token, flow.refreshed.access_token):
        claims = verified_claims(token, metadata, server.url)
        assert claims["sub"] == "alice" and claims["aud"] == server.url
    assert flow.issued.refresh_token != flow.refreshed.refresh_token
    log = server.log_text()
    assert "auth proxy" in log and "development only" in log


async def test_a_refresh_asks_the_development_sign_in_again(
    only_proxy: None, tmp_path: Path, servers: list[ServerProcess]
) -> None:
    server = start(tmp_path, "streaming", LAMBDA_MCP_AUTH_UPSTREAM_CHECK_SECONDS="0")
    servers.append(server)
    flow = await python_sdk_flow(server.url, "dev sign-in refresh", mode="2026-07-28")
    assert flow.texts == [TOOL_TEXT, TOOL_TEXT]
    requests = [line.split()[:3] for line in server.log_text().splitlines() if line.startswith(("GET", "POST"))]
    assert requests.count(["POST", "/_dev/idp/token", "200"]) == 2  # the code, then the facade's upstream refresh


def test_the_login_page_is_marked_development_only_and_asks_for_a_username_alone(
    only_proxy: None, tmp_path: Path, servers: list[ServerProcess]
) -> None:
    server = start(tmp_path, "streaming")
    servers.append(server)
    sign_in = server.url.removesuffix("/mcp") + "/_dev/idp/authorize"
    query = {
        "client_id": "lambda-mcp-dev",
        "redirect_uri": server.url.removesuffix("/mcp") + "/oauth/callback",
        "response_type": "code",
        "scope": "openid",
        "state": "s",
        "nonce": "n",
        "code_challenge": "c" * 43,
        "code_challenge_method": "S256",
    }
    page = httpx.get(sign_in, params=query)
    assert page.status_code == 200 and "Development only." in page.text
    assert page.headers["x-frame-options"] == "DENY" and page.headers["cache-control"] == "no-store"
    visible = [tag for tag in page.text.split("<input")[1:] if 'type="hidden"' not in tag]
    assert len(visible) == 1 and 'name="username"' in visible[0]
    refused = httpx.get(sign_in, params={**query, "redirect_uri": loopback_redirect_uri()})
    assert refused.status_code == 400 and "location" not in refused.headers  # never redirects elsewhere
    unknown = httpx.get(sign_in, params={**query, "client_id": "someone-else"})
    assert unknown.status_code == 400
    forged = httpx.post(sign_in, data={"request": "x.y", "username": "mallory"})
    assert forged.status_code == 400 and "location" not in forged.headers
