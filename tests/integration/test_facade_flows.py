"""The authorization facade through the Lambda handler, in process, with the events each front door sends:
an HTTP API or a Function URL (payload 2.0: the browser's cookies arrive in the event's `cookies` list,
Set-Cookie leaves in the response's `cookies`), and a REST API (payload 1.0, the stage in every path,
cookies in the headers). A sign-in needs the consent page's cookie to come back on the consent post
and on the upstream's callback: these events are where a front door could lose it. The upstream is a
stand-in (tests/unit/test_facade_http.py's); the real one runs in tests/integration/test_facade_e2e.py."""

from __future__ import annotations

import json
from urllib.parse import urlsplit

import pytest
from mangum import Mangum

from lambda_mcp.kit import Stores, build_kit
from lambda_mcp.loader import load_app
from tests.support.facade_events import DOMAIN, Browser, body_of
from tests.unit.test_facade_http import REDIRECT, FakeUpstream, pkce, query, settings, txn_of


@pytest.mark.parametrize("api", ["http", "url", "rest"])
def test_a_sign_in_through_each_front_doors_events(api: str) -> None:
    resource = f"https://{DOMAIN}" + ("/v1/mcp" if api == "rest" else "/mcp")
    kit = build_kit(
        load_app("tests/apps/scoped.py"),
        settings(LAMBDA_MCP_AUTH_AUDIENCE=resource),
        streaming=False,
        stores=Stores.memory(),
    )
    assert kit.facade is not None
    kit.facade.upstream = FakeUpstream()  # type: ignore[assignment]
    browser = Browser(api, Mangum(kit.asgi(), lifespan="off"))
    metadata = json.loads(body_of(browser.request("GET", "/.well-known/oauth-authorization-server")))
    assert metadata["issuer"] == browser.base and metadata["token_endpoint"] == browser.base + "/oauth/token"
    web = "https://client.example/callback"  # a web client's: its consent can be remembered (a loopback one's never)
    registered = browser.request(
        "POST", "/oauth/register", document={"redirect_uris": [web, REDIRECT], "client_name": "Ev"}
    )
    client = json.loads(body_of(registered))
    verifier = "v" * 64
    params = {
        "response_type": "code",
        "client_id": client["client_id"],
        "redirect_uri": web,
        "code_challenge": pkce(verifier),
        "code_challenge_method": "S256",
        "state": "s1",
        "resource": resource,
    }
    page = browser.request("GET", "/oauth/authorize", params)
    html = body_of(page)
    assert page["statusCode"] == 200 and "Ev" in html
    assert f'action="{urlsplit(browser.base).path}/oauth/consent"' in html
    assert "lmcp_browser" in browser.cookies
    to_upstream = browser.request(
        "POST", "/oauth/consent", form={"txn": txn_of(html), "decision": "approve", "confirm": "yes"}
    )
    assert to_upstream["statusCode"] == 302, body_of(to_upstream)
    state = query(browser.location(to_upstream))["state"]
    back = browser.request("GET", "/oauth/callback", {"code": "erin", "state": state})
    assert back["statusCode"] == 302, body_of(back)
    code = query(browser.location(back))["code"]
    assert "lmcp_consent" in browser.cookies
    secret = {"client_id": client["client_id"], "client_secret": client["client_secret"]}
    form = {"grant_type": "authorization_code", "code": code, "redirect_uri": web, "code_verifier": verifier}
    tokens = json.loads(body_of(browser.request("POST", "/oauth/token", form=form | secret)))
    assert tokens["token_type"] == "Bearer" and tokens["refresh_token"]
    again = browser.request("GET", "/oauth/authorize", params)  # the consent is remembered in this browser
    assert again["statusCode"] == 302 and browser.location(again).startswith("https://idp.example/")
    at_loopback = browser.request("GET", "/oauth/authorize", params | {"redirect_uri": REDIRECT})
    assert at_loopback["statusCode"] == 200 and 'name="txn"' in body_of(at_loopback)  # a loopback one: the page again
