"""The authorization facade's hardening, through the Lambda handler (in process, an HTTP API's events):
each test pins a finding of the outside review (issue 33) and fails on the facade before its fix.

The upstream is the stand-in of tests/unit/test_facade_http.py (it signs in whoever its code names, and
refuses a disabled user's refresh with `invalid_grant`); the facade's clock is the test's.
"""

from __future__ import annotations

import dataclasses
import json
import math
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import jwt
import pytest
from mangum import Mangum

from lambda_mcp.facade import clients as clients_module
from lambda_mcp.facade.cimd import DocumentError
from lambda_mcp.facade.limits import WINDOW_SECONDS
from lambda_mcp.kit import Kit, Stores, build_kit
from lambda_mcp.loader import load_app
from tests.support.facade_events import DOMAIN, Browser, body_of
from tests.unit.test_facade_http import FakeUpstream, pkce, query, settings, txn_of

BASE = f"https://{DOMAIN}"
RESOURCE = BASE + "/mcp"
WEB = "https://client.example/callback"
WEB2 = "https://client.example/other"
LOOP = "http://127.0.0.1:9999/callback"
APP = "com.example.app:/oauth"
VERIFIER = "v" * 64
STATE_KEY = "k" * 32
META = "io.modelcontextprotocol/"
MODERN = {"content-type": "application/json", "accept": "application/json, text/event-stream"}
MODERN |= {"mcp-protocol-version": "2026-07-28", "mcp-method": "tools/call"}


@dataclass
class Clock:
    now: float = field(default_factory=time.time)  # the consent cookie's JWT is checked against the real time

    def left_in_window(self) -> str:
        return str(math.ceil(WINDOW_SECONDS - self.now % WINDOW_SECONDS))

    def __call__(self) -> float:
        return self.now


@dataclass
class Stack:
    kit: Kit
    upstream: FakeUpstream
    clock: Clock
    handler: Any
    browser: Browser

    def new_browser(self, source_ip: str = "127.0.0.1") -> Browser:
        return Browser("http", self.handler, source_ip=source_ip)

    def register(self, browser: Browser | None = None, **metadata: Any) -> dict[str, Any]:
        document = {"redirect_uris": [WEB, WEB2, LOOP, APP], "client_name": "Ev", "token_endpoint_auth_method": "none"}
        response = (browser or self.browser).request("POST", "/oauth/register", document={**document, **metadata})
        assert response["statusCode"] == 201, body_of(response)
        return dict(json.loads(body_of(response)))

    def authorize(self, client_id: str, redirect_uri: str = WEB, browser: Browser | None = None, **over: str) -> Any:
        params = {
            "response_type": "code",
            "client_id": client_id,
            "redirect_uri": redirect_uri,
            "code_challenge": pkce(VERIFIER),
            "code_challenge_method": "S256",
            "state": "st",
            "resource": RESOURCE,
            **over,
        }
        return (browser or self.browser).request("GET", "/oauth/authorize", {k: v for k, v in params.items() if v})

    def approve(self, page: dict[str, Any], browser: Browser | None = None, decision: str = "approve") -> Any:
        form = {"txn": txn_of(body_of(page)), "decision": decision, "confirm": "yes"}
        return (browser or self.browser).request("POST", "/oauth/consent", form=form)

    def callback(self, to_upstream: dict[str, Any], user: str, browser: Browser | None = None) -> Any:
        browser = browser or self.browser
        assert to_upstream["statusCode"] == 302, body_of(to_upstream)
        state = query(browser.location(to_upstream))["state"]
        return browser.request("GET", "/oauth/callback", {"code": user, "state": state})

    def code(
        self, client_id: str, redirect_uri: str = WEB, user: str = "alice", browser: Browser | None = None, **over: str
    ) -> str:
        browser = browser or self.browser
        page = self.authorize(client_id, redirect_uri, browser, **over)
        back = self.callback(self.approve(page, browser) if page["statusCode"] == 200 else page, user, browser)
        assert back["statusCode"] == 302, body_of(back)
        return query(browser.location(back))["code"]

    def token(self, form: dict[str, str]) -> tuple[int, dict[str, Any]]:
        response = self.browser.request("POST", "/oauth/token", form=form)
        return response["statusCode"], json.loads(body_of(response))

    def exchange(self, client_id: str, code: str, redirect_uri: str = WEB) -> tuple[int, dict[str, Any]]:
        form = {"grant_type": "authorization_code", "code": code, "client_id": client_id, "code_verifier": VERIFIER}
        return self.token({**form, "redirect_uri": redirect_uri})

    def refresh(self, client_id: str, token: str) -> tuple[int, dict[str, Any]]:
        return self.token({"grant_type": "refresh_token", "refresh_token": token, "client_id": client_id})

    def signed_in(self, user: str = "alice", **over: str) -> tuple[str, dict[str, Any]]:
        client = self.register()["client_id"]
        status, tokens = self.exchange(client, self.code(client, user=user, **over))
        assert status == 200, tokens
        return client, tokens

    def revoke(self, client_id: str, token: str, browser: Browser | None = None) -> int:
        form = {"token": token, "client_id": client_id}
        return int((browser or self.browser).request("POST", "/oauth/revoke", form=form)["statusCode"])

    def tool(self, access_token: str, name: str, arguments: dict[str, Any] | None = None) -> tuple[int, Any]:
        meta = {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {},
        }
        call = {"jsonrpc": "2.0", "id": 1, "method": "tools/call"}
        call["params"] = {"name": name, "arguments": arguments or {}, "_meta": meta}
        headers = {**MODERN, "mcp-name": name, "authorization": f"Bearer {access_token}"}
        response = self.browser.request("POST", "/mcp", document=call, headers=headers)
        text = body_of(response)
        return response["statusCode"], json.loads(text) if text.startswith("{") else text


def stack(stores: Stores | None = None, **env: str) -> Stack:
    environment = {"LAMBDA_MCP_AUTH_AUDIENCE": RESOURCE, "LAMBDA_MCP_STATE_KEY": STATE_KEY, **env}
    kit = build_kit(
        load_app("tests/apps/scoped.py"), settings(**environment), streaming=False, stores=stores or Stores.memory()
    )
    assert kit.facade is not None
    upstream, clock = FakeUpstream(), Clock()
    kit.facade.upstream = upstream  # type: ignore[assignment]
    kit.facade.clock = kit.facade.clients.clock = kit.facade.limits.clock = clock
    handler = Mangum(kit.asgi(), lifespan="off")
    return Stack(kit, upstream, clock, handler, Browser("http", handler))


def _page(response: dict[str, Any]) -> str:
    assert "location" not in {k.lower() for k in response.get("headers") or {}}, response
    return body_of(response)


# -- 1. no redirect before the user acts ------------------------------------------------------------------
@pytest.mark.parametrize(
    ("over", "shown"),
    [
        ({"code_challenge": "", "code_challenge_method": ""}, "PKCE is required"),
        ({"resource": "https://other.example/mcp"}, "resource"),
        ({"scope": "unknown:scope"}, "scope"),
        ({"state": "s" * 1025}, "state"),
        ({"response_type": "token"}, "response_type"),
    ],
)
def test_a_malformed_authorization_is_an_error_page_never_a_redirect(over: dict[str, str], shown: str) -> None:
    s = stack()
    page = s.authorize(s.register()["client_id"], **over)
    assert page["statusCode"] == 400 and shown in _page(page)


# -- 2. an honest consent page ----------------------------------------------------------------------------
@pytest.mark.parametrize(
    "uri",
    [
        "https://\u0441laude.ai/callback",  # a Cyrillic с: shown as "сlaude.ai", visited as xn--laude-0ye.ai
        "https://cl%61ude.ai/callback",  # a browser decodes it to claude.ai
        "mailto:someone@example.com",
        "tel:+15550100",
        "sms:+15550100",
        "ws://127.0.0.1/cb",
        "wss://client.example/cb",
        "ftp://client.example/cb",
        "intent://callback#Intent;scheme=x;end",
        "intent://callback",
        "ms-settings:privacy",
        "search-ms:query=x",
        "web+client:cb",
        "http://127.0.0.1:99999/callback",  # a port that is not one
        "http://127.0.0.1:abc/callback",
        "https://client.example/call\tback",  # a control character: a URL parser drops it
        "https://client.example/\x00",
        "https://client example/cb",
    ],
)
def test_registration_refuses_what_the_consent_page_could_not_show_honestly(uri: str) -> None:
    s = stack()
    refused = s.browser.request("POST", "/oauth/register", document={"redirect_uris": [uri]})
    assert refused["statusCode"] == 400 and json.loads(body_of(refused))["error"] == "invalid_redirect_uri", uri


def test_a_metadata_document_with_a_non_ascii_redirect_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    url = "https://client.example/meta.json"
    document = {"client_id": url, "redirect_uris": ["https://\u0441laude.ai/callback"], "client_name": "Claude"}
    monkeypatch.setattr(clients_module, "fetch_document", lambda *args: (document, 600))
    s = stack()
    page = s.authorize(url, "https://\u0441laude.ai/callback")
    assert page["statusCode"] == 400 and "metadata document could not be used" in _page(page)


def test_the_consent_page_shows_where_the_code_goes_and_that_the_name_is_unverified() -> None:
    s = stack()
    client = s.register(
        redirect_uris=[
            "https://xn--laude-0ye.ai/callback",
            "evil-app://claude.ai/callback",
            LOOP,
            "https://Client.Example:8443/cb",
        ],
        client_name="Claude",
    )["client_id"]
    web = _page(s.authorize(client, "https://xn--laude-0ye.ai/callback"))
    assert '<code id="redirect-host">https://xn--laude-0ye.ai:443</code>' in web and "not verified" in web
    assert "redirect-warning" not in web
    assert "https://client.example:8443" in _page(s.authorize(client, "https://Client.Example:8443/cb"))
    app = _page(s.authorize(client, "evil-app://claude.ai/callback"))
    assert '<code id="redirect-host">evil-app://claude.ai/callback</code>' in app
    assert "An application on this device gets the code" in app
    loopback = _page(s.authorize(client, "http://localhost:41234/callback".replace("localhost", "127.0.0.1")))
    assert "http://127.0.0.1:41234" in loopback and "The code goes to a program on this computer" in loopback


# -- 3. remembered consent: the exact redirect URI, never loopback or an app --------------------------------
def test_a_remembered_consent_is_bound_to_the_exact_redirect_and_never_skips_loopback_or_apps() -> None:
    s = stack()
    client = s.register()["client_id"]
    for redirect in (WEB, LOOP, APP):
        s.code(client, redirect)
    again = s.authorize(client, WEB)
    assert again["statusCode"] == 302 and s.browser.location(again).startswith("https://idp.example/")
    for redirect in (WEB2, LOOP, "http://127.0.0.1:41000/callback", APP):
        page = s.authorize(client, redirect)
        assert page["statusCode"] == 200 and 'name="txn"' in body_of(page), redirect


# -- 4. the upstream stays in charge ----------------------------------------------------------------------------
def test_a_user_the_upstream_disabled_loses_access_at_the_next_refresh() -> None:
    s = stack(LAMBDA_MCP_AUTH_UPSTREAM_CHECK_SECONDS="0")
    client, tokens = s.signed_in()
    status, refreshed = s.refresh(client, tokens["refresh_token"])
    assert status == 200 and s.upstream.refreshed == ["up:alice"]  # asked the upstream with its refresh token
    s.upstream.disabled.add("alice")
    status, refused = s.refresh(client, refreshed["refresh_token"])
    assert status == 400 and refused["error"] == "invalid_grant"
    assert s.refresh(client, refreshed["refresh_token"])[0] == 400  # the sign-in is over


def test_the_upstream_is_asked_once_its_check_is_due_and_an_unreachable_one_signs_nobody_out() -> None:
    s = stack(LAMBDA_MCP_AUTH_UPSTREAM_CHECK_SECONDS="600")
    client, tokens = s.signed_in()
    status, tokens = s.refresh(client, tokens["refresh_token"])
    assert status == 200 and s.upstream.refreshed == []  # checked at sign-in, 0 s ago
    s.clock.now += 601
    s.upstream.unreachable = True
    status, tokens = s.refresh(client, tokens["refresh_token"])
    assert status == 200 and len(s.upstream.refreshed) == 1  # asked, could not tell: the refresh goes through
    s.upstream.unreachable = False
    status, tokens = s.refresh(client, tokens["refresh_token"])
    assert status == 200 and len(s.upstream.refreshed) == 2  # asked again, since the last one could not tell
    status, tokens = s.refresh(client, tokens["refresh_token"])
    assert status == 200 and len(s.upstream.refreshed) == 2  # and not again until the next is due


def test_a_sign_in_without_an_upstream_refresh_token_ends_when_its_check_is_due() -> None:
    s = stack(LAMBDA_MCP_AUTH_UPSTREAM_CHECK_SECONDS="0")
    exchange = s.upstream.exchange
    s.upstream.exchange = lambda code, verifier: {
        k: v for k, v in exchange(code, verifier).items() if k != "refresh_token"
    }  # type: ignore[method-assign]
    client, tokens = s.signed_in()
    status, refused = s.refresh(client, tokens["refresh_token"])
    assert status == 400 and refused["error"] == "invalid_grant"


def test_a_sign_in_not_refreshed_for_the_idle_time_ends() -> None:
    s = stack(LAMBDA_MCP_AUTH_IDLE_SECONDS="3600")
    client, tokens = s.signed_in()
    s.clock.now += 3000
    status, tokens = s.refresh(client, tokens["refresh_token"])
    assert status == 200  # refreshed within the idle time: it slides
    s.clock.now += 3000
    status, tokens = s.refresh(client, tokens["refresh_token"])
    assert status == 200
    s.clock.now += 3601
    status, refused = s.refresh(client, tokens["refresh_token"])
    assert status == 400 and refused["error"] == "invalid_grant"


@pytest.mark.parametrize("api", ["http", "rest"])
def test_revocation_ends_the_sign_in_of_a_refresh_or_an_access_token(api: str) -> None:
    resource = BASE + ("/v1/mcp" if api == "rest" else "/mcp")
    s = stack(LAMBDA_MCP_AUTH_AUDIENCE=resource)
    s.browser = Browser(api, s.handler)
    metadata = json.loads(body_of(s.browser.request("GET", "/.well-known/oauth-authorization-server")))
    assert metadata["revocation_endpoint"] == s.browser.base + "/oauth/revoke"
    client = s.register()["client_id"]

    def sign_in() -> dict[str, Any]:
        status, tokens = s.exchange(client, s.code(client, resource=resource))
        assert status == 200, tokens
        return tokens

    by_refresh, by_access, other = sign_in(), sign_in(), sign_in()
    stranger = s.register()["client_id"]
    assert s.revoke(stranger, other["refresh_token"]) == 200  # not its token: answered alike, nothing ends
    assert s.revoke(client, "no.such-token") == 200 and s.revoke(client, "garbage") == 200
    assert s.revoke(client, by_refresh["refresh_token"]) == 200
    assert s.revoke(client, by_access["access_token"]) == 200
    assert s.refresh(client, by_refresh["refresh_token"])[1]["error"] == "invalid_grant"
    assert s.refresh(client, by_access["refresh_token"])[1]["error"] == "invalid_grant"
    assert s.refresh(client, other["refresh_token"])[0] == 200


def test_signout_everywhere_ends_every_sign_in_and_forgets_consent(dynamodb_local_url: str) -> None:
    import boto3

    from lambda_mcp.storage.dynamodb import create_table
    from lambda_mcp.storage.dynamodb.facade import DynamoDBFacadeStore

    table = "facade-signout"
    client = boto3.client("dynamodb", endpoint_url=dynamodb_local_url)
    create_table(client, table)
    s = stack(dataclasses.replace(Stores.memory(), facade=DynamoDBFacadeStore(table, client=client)))
    s.clock.now = time.time()  # the command signs out as of the real time
    app_client, alice = s.signed_in("alice")
    bob = s.exchange(app_client, s.code(app_client, user="bob", browser=s.new_browser()))[1]
    s.clock.now += 1
    cli = str(Path(sys.executable).with_name("lambda-mcp"))
    done = subprocess.run(
        [cli, "signout", "alice", "--table", table, "--aws-endpoint", dynamodb_local_url],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert "signed out alice" in done.stderr
    assert s.refresh(app_client, alice["refresh_token"])[1]["error"] == "invalid_grant"
    assert s.refresh(app_client, bob["refresh_token"])[0] == 200  # only alice
    page = s.authorize(app_client, WEB)  # alice's remembered consent in this browser is forgotten: asked again
    assert page["statusCode"] == 200 and 'name="txn"' in body_of(page)


# -- 5. who may sign in, and what the tokens say of them -------------------------------------------------------
def test_only_users_who_meet_the_conditions_sign_in_and_their_claims_reach_the_tool() -> None:
    s = stack(
        LAMBDA_MCP_AUTH_UPSTREAM_REQUIRE="hd=example.com,email_verified=true,groups=staff",
        LAMBDA_MCP_AUTH_UPSTREAM_CLAIMS="email,groups,sub,iss",
    )
    s.upstream.claims = {
        "alice": {"hd": "example.com", "email_verified": True, "groups": ["staff", "ops"], "email": "a@example.com"},
        "mallory": {"hd": "gmail.com", "email_verified": True, "groups": ["staff"]},
        "eve": {"hd": "example.com", "email_verified": False, "groups": ["staff"]},
        "oscar": {"hd": "example.com", "email_verified": True, "groups": ["ops"]},
    }
    client = s.register()["client_id"]
    for user in ("mallory", "eve", "oscar"):
        back = s.callback(s.approve(s.authorize(client, LOOP)), user)
        found = query(s.browser.location(back))
        assert found["error"] == "access_denied" and "code" not in found, user
    back = s.callback(s.approve(s.authorize(client, WEB)), "alice")
    status, tokens = s.exchange(client, query(s.browser.location(back))["code"])
    assert status == 200
    claims = jwt.decode(tokens["access_token"], options={"verify_signature": False})
    assert claims["email"] == "a@example.com" and claims["groups"] == ["staff", "ops"]
    assert claims["iss"] == BASE and claims["sub"] == "alice"  # copied claims never replace the token's own
    status, answer = s.tool(tokens["access_token"], "claims")
    assert status == 200, answer
    seen = json.loads(answer["result"]["content"][0]["text"])["claims"]
    assert seen == {"sub": "alice", "email": "a@example.com", "groups": ["staff", "ops"]}
    s.upstream.claims["alice"]["groups"] = ["ops"]  # alice leaves staff: a remembered consent still refuses her
    page = s.authorize(client, WEB)
    refused = s.callback(page, "alice")
    assert refused["statusCode"] == 403 and "may not use this server" in _page(refused)


# -- 6. a benign duplicate refresh ------------------------------------------------------------------------------
def test_a_repeated_refresh_within_the_leeway_gets_the_same_successor_and_later_revokes() -> None:
    s = stack()
    client, tokens = s.signed_in()
    first, again = s.refresh(client, tokens["refresh_token"]), s.refresh(client, tokens["refresh_token"])
    assert first[0] == again[0] == 200
    assert first[1]["refresh_token"] == again[1]["refresh_token"]  # a retry after a lost answer: the same one
    assert first[1]["access_token"] != again[1]["access_token"]
    s.clock.now += 31
    late = s.refresh(client, tokens["refresh_token"])  # past the leeway: a reuse, which revokes the sign-in
    assert late[0] == 400 and s.refresh(client, first[1]["refresh_token"])[0] == 400


def test_a_repeat_after_the_successor_was_used_revokes() -> None:
    s = stack()
    client, tokens = s.signed_in()
    status, following = s.refresh(client, tokens["refresh_token"])
    assert s.refresh(client, following["refresh_token"])[0] == 200
    assert s.refresh(client, tokens["refresh_token"])[0] == 400


# -- 7. abuse limits ---------------------------------------------------------------------------------------------
def test_registrations_are_counted_per_source_address_and_retry_after_is_the_time_left() -> None:
    s = stack()
    crowd = s.new_browser("198.51.100.7")
    for _ in range(20):
        s.register(crowd)
    refused = crowd.request("POST", "/oauth/register", document={"redirect_uris": [WEB]})
    assert refused["statusCode"] == 429 and json.loads(body_of(refused))["error"] == "temporarily_unavailable"
    assert crowd.header(refused, "retry-after") == s.clock.left_in_window()
    s.register(s.new_browser("203.0.113.9"))  # everyone else still registers


def test_pending_authorizations_are_capped_per_source_address() -> None:
    s = stack()
    client = s.register()["client_id"]
    crowd = s.new_browser("198.51.100.8")
    for _ in range(60):
        assert s.authorize(client, LOOP, crowd)["statusCode"] == 200
    refused = s.authorize(client, LOOP, crowd)
    assert refused["statusCode"] == 429 and "Too many sign-ins" in _page(refused)
    assert crowd.header(refused, "retry-after") == s.clock.left_in_window()
    assert s.authorize(client, LOOP, s.new_browser("203.0.113.10"))["statusCode"] == 200


def test_metadata_document_fetches_are_limited_and_tell_the_client_nothing_of_what_they_saw(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    fetched: list[str] = []

    def fetch(url: str, allow_loopback: bool) -> Any:
        fetched.append(url)
        raise DocumentError("the client_id URL resolves to a private address 10.0.0.7")

    monkeypatch.setattr(clients_module, "fetch_document", fetch)
    s = stack()
    crowd = s.new_browser("198.51.100.9")
    for n in range(30):
        page = s.authorize(f"https://client{n}.example/meta.json", WEB, crowd)
        text = _page(page)
        assert page["statusCode"] == 400 and "could not be used" in text
        assert "private" not in text and "10.0.0.7" not in text
    refused = s.authorize("https://client99.example/meta.json", WEB, crowd)
    assert refused["statusCode"] == 429 and len(fetched) == 30  # refused before fetching
    for n in range(30):  # one host, many addresses
        s.authorize(f"https://one.example/{n}.json", WEB, s.new_browser(f"203.0.113.{n + 1}"))
    assert s.authorize("https://one.example/x.json", WEB, s.new_browser("192.0.2.1"))["statusCode"] == 429


# -- 9. double-clickjacking -------------------------------------------------------------------------------------
def test_approve_counts_only_with_the_box_ticked_and_deny_needs_nothing() -> None:
    s = stack()
    client = s.register()["client_id"]
    page = s.authorize(client, LOOP)
    html = body_of(page)
    assert 'type="checkbox" name="confirm" value="yes" id="confirm" required' in html
    assert 'value="deny" id="deny" formnovalidate' in html
    unticked = s.browser.request("POST", "/oauth/consent", form={"txn": txn_of(html), "decision": "approve"})
    assert unticked["statusCode"] == 400 and "tick the box" in _page(unticked)
    assert s.approve(page)["statusCode"] == 302  # the same sign-in, approved properly
    denied = s.authorize(client, LOOP)
    deny = s.browser.request("POST", "/oauth/consent", form={"txn": txn_of(body_of(denied)), "decision": "deny"})
    assert query(s.browser.location(deny))["error"] == "access_denied"


# -- 10. a code used twice --------------------------------------------------------------------------------------
def test_a_replayed_code_revokes_what_its_first_use_issued() -> None:
    s = stack()
    client = s.register()["client_id"]
    code = s.code(client)
    status, tokens = s.exchange(client, code)
    assert status == 200
    status, replay = s.exchange(client, code)
    assert status == 400 and replay["error"] == "invalid_grant"
    assert s.refresh(client, tokens["refresh_token"])[1]["error"] == "invalid_grant"


# -- 11. deeply nested JSON -------------------------------------------------------------------------------------
@pytest.mark.parametrize("depth", [10, 3000])
def test_deeply_nested_registration_json_is_a_400(depth: int) -> None:
    s = stack()
    body = '{"redirect_uris": ["' + WEB + '"], "x": ' + "[" * depth + "]" * depth + "}"
    assert len(body) < 8192  # under the size cap
    response = s.handler(_raw_post("/oauth/register", body.encode()), _context())
    assert response["statusCode"] == 400, body_of(response)
    assert json.loads(body_of(response))["error"] == "invalid_client_metadata"


def _raw_post(path: str, body: bytes) -> dict[str, Any]:
    from lambda_mcp.local.gateways import http_api_event

    return http_api_event("POST", path, {"host": DOMAIN, "content-type": "application/json"}, body, DOMAIN)


def _context() -> Any:
    from lambda_mcp.local.context import LambdaContext

    return LambdaContext()


# -- scopes and grant types ---------------------------------------------------------------------------------------
def test_the_facade_grants_a_tools_scope_and_a_token_without_it_gets_that_tools_step_up_only() -> None:
    s = stack(LAMBDA_MCP_AUTH_SCOPES="mcp:tools mcp:read")
    metadata = json.loads(body_of(s.browser.request("GET", "/.well-known/oauth-authorization-server")))
    assert {"mcp:tools", "mcp:read", "inventory:write", "admin"} <= set(metadata["scopes_supported"])
    client, narrow = s.signed_in(scope="mcp:tools")  # asks for a subset of the required scopes
    assert narrow["scope"].split() == ["mcp:tools", "mcp:read"]  # the required ones always come along
    assert s.tool(narrow["access_token"], "whoami")[0] == 200  # no blanket 403
    status, _ = s.tool(narrow["access_token"], "restock", {"item": "x"})
    assert status == 403
    page = s.authorize(client, LOOP, scope="mcp:tools inventory:write")
    assert "inventory:write" in body_of(page)  # the user approves the tool's scope on the page
    back = s.callback(s.approve(page), "alice")
    status, wide = s.exchange(client, query(s.browser.location(back))["code"], LOOP)
    assert status == 200 and "inventory:write" in wide["scope"].split()
    assert s.tool(wide["access_token"], "restock", {"item": "x"})[0] == 200


def test_a_client_that_registered_without_refresh_token_gets_none() -> None:
    s = stack()
    client = s.register(grant_types=["authorization_code"])
    assert client["grant_types"] == ["authorization_code"]
    status, tokens = s.exchange(client["client_id"], s.code(client["client_id"]))
    assert status == 200 and "refresh_token" not in tokens
    status, refused = s.refresh(client["client_id"], "x.y")
    assert status == 400 and refused["error"] == "unauthorized_client"
    omitted = s.register()  # the field left out: both grants, as MCP clients expect
    assert s.exchange(omitted["client_id"], s.code(omitted["client_id"]))[1]["refresh_token"]


def test_a_requested_redirect_with_a_control_character_never_matches() -> None:
    s = stack()
    client = s.register()["client_id"]
    for requested in (
        "http://127.0.0.1:9999/call\tback",
        "http://127.0.0.1:9999/callback\n",
        "https://client.example/call\tback",
    ):
        page = s.authorize(client, requested)
        assert page["statusCode"] == 400 and "Wrong redirect address" in _page(page), repr(requested)
