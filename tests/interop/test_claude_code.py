"""Claude Code signs in to `LAMBDA_MCP_AUTH=proxy lambda-mcp dev APP`, with no other `LAMBDA_MCP_*` setting
(issue 34): `claude mcp add`, then `claude mcp login` (under a pseudo-terminal), whose browser (`$BROWSER`:
tests/support/cli_browser.py) walks the facade's consent page and the development sign-in's login page as
user `cc` and delivers the code to Claude Code's loopback listener; then `claude mcp get` health-checks the
server with the token and reports it connected.

Claude Code 2.1.332 registers by CIMD whenever the authorization server advertises it, as the facade always
does. Its client id, https://claude.ai/oauth/claude-code-client-metadata, is a document the facade must fetch,
and this machine cannot reach it: the facade answers its "Unknown application" page (400), and Claude Code
keeps waiting for a code (it falls back to DCR only when CIMD is not advertised). So the test serves the same
document (its published fields: the name "Claude Code", the port-less loopback `/callback` redirect URIs, a
public client) over https on 127.0.0.1, and points Claude Code at it with its own setting for the document's
URL, `MCP_OAUTH_CLIENT_METADATA_URL`. The certificate comes from a CA made for the test, which the dev server
trusts through `SSL_CERT_FILE`: the facade fetches and verifies the document as in production; only its
loopback address is a local allowance.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.claude_code import ClaudeCode
from tests.support.cli_browser import LOG, browser_command, opened
from tests.support.facade_clients import (
    LoopbackTLS,
    MetadataDocument,
    authorization_server_metadata,
    loopback_tls,
    verified_claims,
)
from tests.support.polling import wait_until
from tests.support.processes import ServerProcess, lambda_mcp_dev

APP = "examples/conformance/server.py"
REDIRECT_URIS = ["http://localhost/callback", "http://127.0.0.1/callback"]
"""What Claude Code's published metadata document lists; it listens on `http://localhost:<port>/callback`."""


@pytest.fixture
def tls(tmp_path: Path) -> LoopbackTLS:
    return loopback_tls(tmp_path)


@pytest.fixture
def document(tls: LoopbackTLS) -> Iterator[MetadataDocument]:
    served = MetadataDocument("Claude Code", REDIRECT_URIS[0], tls)
    served.document["redirect_uris"] = REDIRECT_URIS
    yield served
    served.stop()


@pytest.fixture
def server(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, tls: LoopbackTLS) -> Iterator[ServerProcess]:
    """The dev server with `LAMBDA_MCP_AUTH=proxy` alone, trusting the test's CA for the document's fetch."""
    for name in [name for name in os.environ if name.startswith("LAMBDA_MCP_")]:
        monkeypatch.delenv(name)
    env = {"LAMBDA_MCP_AUTH": "proxy", "SSL_CERT_FILE": str(tls.ca_file)}
    started = lambda_mcp_dev(APP, through_lambda=False, env=env, log=tmp_path / "dev.log")
    yield started
    started.stop()


def test_claude_code_signs_in_through_the_facade_and_the_development_sign_in(
    tmp_path: Path, server: ServerProcess, document: MetadataDocument
) -> None:
    browser_log = tmp_path / "browser.log"
    claude = ClaudeCode(
        tmp_path / "claude",
        BROWSER=browser_command(tmp_path),
        MCP_OAUTH_CLIENT_METADATA_URL=document.url,
        **{LOG: str(browser_log), "LAMBDA_MCP_TEST_USER": "cc"},
    )
    claude.run("mcp", "add", "--scope", "user", "--transport", "http", "local", server.url)
    assert "Needs authentication" in claude.run("mcp", "get", "local")

    status, output = claude.login("local")
    assert status == 0, f"{output}\n--- dev server:\n{server.output()}"
    assert 'Authenticated with "local"' in output

    (request,) = opened(browser_log)  # one authorization request, to the facade, with Claude Code's own choices
    assert request["client_id"] == document.url and document.fetches == 1
    assert request["redirect_uri"].startswith("http://localhost:") and request["redirect_uri"].endswith("/callback")
    assert request["code_challenge_method"] == "S256" and request["resource"] == server.url
    assert "Connected" in claude.run("mcp", "get", "local")
    wait_until(lambda: "POST /mcp 200 tools/list" in server.log_text(), what="the health check's tools/list")
    requests = [line.split()[:3] for line in server.log_text().splitlines() if line.startswith(("GET", "POST"))]
    assert ["POST", "/oauth/consent", "302"] in requests  # the facade's consent page, approved
    assert ["POST", "/_dev/idp/authorize", "302"] in requests  # then the development sign-in's login page

    (entry,) = claude.credentials()["mcpOAuth"].values()
    metadata = authorization_server_metadata(server.url.removesuffix("/mcp"))
    claims = verified_claims(entry["accessToken"], metadata, server.url)
    assert claims["sub"] == "cc" and claims["client_id"] == document.url
