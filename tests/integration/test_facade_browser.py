"""The authorization facade's consent page in a real browser: headless Chromium (Debian's package, driven
by Selenium) against `lambda-mcp dev examples/conformance/server.py --lambda` with `LAMBDA_MCP_AUTH=proxy`
in front of the oidc-provider upstream (tests/support/oidc/upstream.mjs).

A client registered by DCR sends the browser to /oauth/authorize. The page names the client and where
the code goes (a program on this computer: its redirect URI is a loopback listener); Deny brings the
browser back to the client's redirect URI with `error=access_denied` and the client's `state`; Approve
counts only once its box is ticked (a click that lands on it does nothing), then sends the browser
through the upstream's login and back to the client with a code, which the client exchanges for the
facade's token; the same client asking again sees the page again (a loopback redirect's consent is
never remembered: any program can listen on a loopback port).
"""

from __future__ import annotations

import base64
import hashlib
import secrets
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from urllib.parse import parse_qs, urlencode, urlsplit

import httpx
import pytest
from selenium import webdriver
from selenium.webdriver.common.by import By

from tests.support.browser import chromium
from tests.support.facade_clients import authorization_server_metadata, verified_claims
from tests.support.loopback import LoopbackServer, respond
from tests.support.polling import wait_until
from tests.support.processes import ServerProcess, free_port, lambda_mcp_dev
from tests.support.upstream import Upstream, start_upstream

CLIENT_NAME = "Browser Test Client"


class RedirectListener:
    """The client's loopback redirect URI (RFC 8252): records each query it receives."""

    def __init__(self) -> None:
        self.queries: list[dict[str, str]] = []
        self._server = LoopbackServer(self._receive)
        self.redirect_uri = f"{self._server.url}/callback"

    def _receive(self, handler: BaseHTTPRequestHandler) -> None:
        parts = urlsplit(handler.path)
        if parts.path == "/callback":
            self.queries.append({name: values[0] for name, values in parse_qs(parts.query).items()})
        respond(handler, 200, b"<!doctype html><title>client</title><p id=received>received</p>", "text/html")

    def stop(self) -> None:
        self._server.stop()


@pytest.fixture(scope="module")
def facade(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[ServerProcess, Upstream]]:
    tmp, port = tmp_path_factory.mktemp("facade-browser"), free_port()
    upstream = start_upstream(tmp / "oidc.log", [f"http://127.0.0.1:{port}/oauth/callback"])
    env = {
        "LAMBDA_MCP_AUTH": "proxy",
        "LAMBDA_MCP_AUTH_AUDIENCE": f"http://127.0.0.1:{port}/mcp",
        "LAMBDA_MCP_AUTH_SCOPES": "mcp:tools",
        **upstream.facade_env(),
    }
    try:
        server = lambda_mcp_dev(
            "examples/conformance/server.py", through_lambda=True, env=env, port=port, log=tmp / "dev.log"
        )
    except BaseException:
        upstream.stop()
        raise
    yield server, upstream
    server.stop()
    upstream.stop()


@pytest.fixture(scope="module")
def browser() -> Iterator[webdriver.Chrome]:
    with chromium() as driver:
        yield driver


@pytest.fixture
def listener() -> Iterator[RedirectListener]:
    started = RedirectListener()
    yield started
    started.stop()


def register(metadata: dict[str, str], redirect_uri: str) -> str:
    """A public client registered by DCR: its id."""
    registered = httpx.post(
        metadata["registration_endpoint"],
        json={
            "client_name": CLIENT_NAME,
            "redirect_uris": [redirect_uri],
            "grant_types": ["authorization_code", "refresh_token"],
            "response_types": ["code"],
            "token_endpoint_auth_method": "none",
        },
    )
    assert registered.status_code == 201, registered.text
    return str(registered.json()["client_id"])


def authorization(
    server: ServerProcess, redirect_uri: str, client_id: str = ""
) -> tuple[str, str, str, dict[str, str]]:
    """Register a public client (DCR) unless `client_id` names one, and build its authorization request:
    (url, state, verifier, the facade's metadata with the client id)."""
    metadata = authorization_server_metadata(f"http://127.0.0.1:{server.port}")
    client_id = client_id or register(metadata, redirect_uri)
    state, verifier = secrets.token_urlsafe(16), secrets.token_urlsafe(48)
    challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
    query = urlencode(
        {
            "response_type": "code",
            "client_id": client_id,
            "redirect_uri": redirect_uri,
            "state": state,
            "code_challenge": challenge,
            "code_challenge_method": "S256",
            "resource": server.url,
            "scope": "mcp:tools",
        }
    )
    return f"{metadata['authorization_endpoint']}?{query}", state, verifier, {"client_id": client_id, **metadata}


def fresh(browser: webdriver.Chrome) -> None:
    """Forget every cookie (the facade's and the upstream's): a user who has never signed in."""
    browser.execute_cdp_cmd("Network.clearBrowserCookies", {})


def test_the_consent_page_names_the_client_and_deny_returns_access_denied(
    facade: tuple[ServerProcess, Upstream], browser: webdriver.Chrome, listener: RedirectListener
) -> None:
    server, _ = facade
    url, state, _, metadata = authorization(server, listener.redirect_uri)
    fresh(browser)
    browser.get(url)
    page = browser.find_element(By.TAG_NAME, "body").text
    assert CLIENT_NAME in page and "127.0.0.1" in page  # who asks, and where the answer goes
    assert "a program on this computer" in page and "not verified" in page
    browser.find_element(By.ID, "deny").click()  # Deny needs no ticked box
    (query,) = wait_until(lambda: listener.queries, timeout=15, what="the browser to reach the client")
    assert query["error"] == "access_denied" and query["state"] == state and "code" not in query
    assert query.get("iss", metadata["issuer"]) == metadata["issuer"]  # RFC 9207, when sent
    assert browser.find_element(By.ID, "received").text == "received"


def test_approve_needs_its_box_then_goes_through_the_upstream_login_to_the_client_with_a_code(
    facade: tuple[ServerProcess, Upstream], browser: webdriver.Chrome, listener: RedirectListener
) -> None:
    server, upstream = facade
    url, state, verifier, metadata = authorization(server, listener.redirect_uri)
    fresh(browser)
    browser.get(url)
    assert CLIENT_NAME in browser.find_element(By.TAG_NAME, "body").text
    consent_url = browser.current_url
    browser.find_element(By.ID, "approve").click()  # a click that lands on Approve, box unticked: nothing is sent
    time.sleep(0.5)
    assert browser.current_url == consent_url and browser.find_element(By.ID, "approve").is_displayed()
    browser.find_element(By.ID, "confirm").click()
    browser.find_element(By.ID, "approve").click()
    wait_until(lambda: browser.current_url.startswith(upstream.issuer), timeout=15, what="the upstream's login")
    browser.find_element(By.NAME, "login").send_keys("dana")
    browser.find_element(By.NAME, "password").send_keys("any")
    browser.find_element(By.CSS_SELECTOR, "form [type=submit]").click()
    (query,) = wait_until(lambda: listener.queries, timeout=15, what="the browser to reach the client")
    assert query["state"] == state and query["code"] and "error" not in query
    token = httpx.post(
        metadata["token_endpoint"],
        data={
            "grant_type": "authorization_code",
            "code": query["code"],
            "redirect_uri": listener.redirect_uri,
            "code_verifier": verifier,
            "client_id": metadata["client_id"],
            "resource": server.url,
        },
    )
    assert token.status_code == 200, token.text
    claims = verified_claims(token.json()["access_token"], metadata, server.url)
    assert claims["iss"] == metadata["issuer"] and "dana" in claims["sub"]  # who signed in upstream
    assert "mcp:tools" in str(claims.get("scope", "")).split()

    # The same user and client again in this browser: a loopback redirect's consent is never remembered.
    again, _, _, _ = authorization(server, listener.redirect_uri, client_id=metadata["client_id"])
    browser.get(again)
    assert browser.find_element(By.ID, "approve").is_displayed() and len(listener.queries) == 1
