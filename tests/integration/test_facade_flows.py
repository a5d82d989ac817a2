"""The authorization facade through the Lambda handler, in process, with the events each front door sends:
an HTTP API or a Function URL (payload 2.0: the browser's cookies arrive in the event's `cookies` list,
Set-Cookie leaves in the response's `cookies`), and a REST API (payload 1.0, the stage in every path,
cookies in the headers). A sign-in needs the consent page's cookie to come back on the consent post
and on the upstream's callback: these events are where a front door could lose it. The upstream is a
stand-in (tests/unit/test_facade_http.py's); the real one runs in tests/integration/test_facade_e2e.py."""

from __future__ import annotations

import base64
import json
from dataclasses import dataclass, field
from http.cookies import SimpleCookie
from typing import Any
from urllib.parse import urlencode, urlsplit

import pytest
from mangum import Mangum

from lambda_mcp.kit import Stores, build_kit
from lambda_mcp.loader import load_app
from lambda_mcp.local.context import LambdaContext
from lambda_mcp.local.gateways import Call, http_api_event, rest_api_event
from tests.unit.test_facade_http import REDIRECT, FakeUpstream, pkce, query, settings, txn_of

DOMAIN = "abc123.execute-api.us-east-1.amazonaws.com"


@dataclass
class Browser:
    """Sends requests as `api`'s events to the handler and keeps the cookies it is given, as a browser would."""

    api: str
    handler: Any
    cookies: dict[str, str] = field(default_factory=dict)

    @property
    def base(self) -> str:
        return f"https://{DOMAIN}" + ("/v1" if self.api == "rest" else "")

    def request(
        self, method: str, path: str, params: dict[str, str] | None = None, form: Any = None, document: Any = None
    ) -> dict[str, Any]:
        target = path + (f"?{urlencode(params)}" if params else "")
        headers = {"host": DOMAIN}
        body = b""
        if form is not None:
            body, headers["content-type"] = urlencode(form).encode(), "application/x-www-form-urlencoded"
        if document is not None:
            body, headers["content-type"] = json.dumps(document).encode(), "application/json"
        cookie = "; ".join(f"{k}={v}" for k, v in self.cookies.items())
        if self.api == "rest":
            if cookie:
                headers["cookie"] = cookie
            event = rest_api_event(Call(method, f"/v1{target}", headers, body, DOMAIN), path, None)
        else:
            event = http_api_event(method, target, headers, body, DOMAIN)
            if cookie:
                event["cookies"] = [f"{k}={v}" for k, v in self.cookies.items()]  # as API Gateway sends them
        response: dict[str, Any] = self.handler(event, LambdaContext())
        set_cookies = response.get("cookies") or []
        multi = {k.lower(): v for k, v in (response.get("multiValueHeaders") or {}).items()}
        single = {k.lower(): v for k, v in (response.get("headers") or {}).items()}
        set_cookies += multi.get("set-cookie", []) or ([single["set-cookie"]] if "set-cookie" in single else [])
        for header in set_cookies:
            for name, morsel in SimpleCookie(header).items():
                self.cookies[name] = morsel.value
        return response

    def location(self, response: dict[str, Any]) -> str:
        headers = {k.lower(): v for k, v in (response.get("headers") or {}).items()}
        multi = {k.lower(): v[0] for k, v in (response.get("multiValueHeaders") or {}).items()}
        found: str = headers.get("location") or multi["location"]
        return found


def _body(response: dict[str, Any]) -> str:
    raw = response.get("body") or ""
    return base64.b64decode(raw).decode() if response.get("isBase64Encoded") else str(raw)


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
    metadata = json.loads(_body(browser.request("GET", "/.well-known/oauth-authorization-server")))
    assert metadata["issuer"] == browser.base and metadata["token_endpoint"] == browser.base + "/oauth/token"
    registered = browser.request("POST", "/oauth/register", document={"redirect_uris": [REDIRECT], "client_name": "Ev"})
    client = json.loads(_body(registered))
    verifier = "v" * 64
    params = {
        "response_type": "code",
        "client_id": client["client_id"],
        "redirect_uri": REDIRECT,
        "code_challenge": pkce(verifier),
        "code_challenge_method": "S256",
        "state": "s1",
        "resource": resource,
    }
    page = browser.request("GET", "/oauth/authorize", params)
    html = _body(page)
    assert page["statusCode"] == 200 and "Ev" in html
    assert f'action="{urlsplit(browser.base).path}/oauth/consent"' in html
    assert "lmcp_browser" in browser.cookies
    to_upstream = browser.request("POST", "/oauth/consent", form={"txn": txn_of(html), "decision": "approve"})
    assert to_upstream["statusCode"] == 302, _body(to_upstream)
    state = query(browser.location(to_upstream))["state"]
    back = browser.request("GET", "/oauth/callback", {"code": "erin", "state": state})
    assert back["statusCode"] == 302, _body(back)
    code = query(browser.location(back))["code"]
    assert "lmcp_consent" in browser.cookies
    secret = {"client_id": client["client_id"], "client_secret": client["client_secret"]}
    form = {"grant_type": "authorization_code", "code": code, "redirect_uri": REDIRECT, "code_verifier": verifier}
    tokens = json.loads(_body(browser.request("POST", "/oauth/token", form=form | secret)))
    assert tokens["token_type"] == "Bearer" and tokens["refresh_token"]
    again = browser.request("GET", "/oauth/authorize", params)  # the consent is remembered in this browser
    assert again["statusCode"] == 302 and browser.location(again).startswith("https://idp.example/")
