"""Connections (tools that call another service as the user), through the facade in process: the kit's ASGI
app with `LAMBDA_MCP_AUTH=proxy`, a stand-in upstream (tests/unit/test_facade_http.py's), and a real
stand-in third-party provider on loopback (tests/support/oauth_provider.py) whose API answers per user.

Each user signs in through the facade (their browser keeps its cookies), then calls a tool that needs the
`demo` connection: the first call asks for a URL elicitation naming the facade's start link; the browser
follows it through the provider's consent and back; the call, answered, shows the provider's data for that
user. Then: no second question, expiry refreshed silently, a disconnect asks again, another user's link
refused, a task, the legacy era's -32042, and no token in any answer or log line.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest

from lambda_mcp.kit import Stores, build_kit
from lambda_mcp.loader import load_app
from lambda_mcp.protocol.names import TASKS_EXTENSION
from tests.support.client import ACCEPT, META, MODERN
from tests.support.oauth_provider import OAuthProvider
from tests.unit.test_facade_http import BASE, FakeUpstream
from tests.unit.test_facade_http import Rig as BrowserRig
from tests.unit.test_facade_http import settings as facade_settings

pytestmark = pytest.mark.anyio
CALLBACK = BASE + "/oauth/connections/demo/callback"
CAPABLE = {**META, "io.modelcontextprotocol/clientCapabilities": {"elicitation": {"url": {}}}}
TASK_CAPABLE = {
    **META,
    "io.modelcontextprotocol/clientCapabilities": {"elicitation": {"url": {}}, "extensions": {TASKS_EXTENSION: {}}},
}


@pytest.fixture(scope="module")
def provider() -> Iterator[OAuthProvider]:
    with OAuthProvider({"mcp-app": ("demo-secret", [CALLBACK])}) as started:
        yield started


@dataclass
class User:
    """One person: their browser (cookies), their MCP access token."""

    name: str
    browser: httpx.AsyncClient
    token: str

    async def call(self, tool: str, *, tasks: bool = False, **params: Any) -> dict[str, Any]:
        meta = TASK_CAPABLE if tasks else CAPABLE
        message = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": tool, "_meta": meta, **params}}
        headers = {"mcp-protocol-version": MODERN, "mcp-method": "tools/call", "mcp-name": tool, "accept": ACCEPT}
        response = await self.browser.post(
            "/mcp", json=message, headers={**headers, "authorization": f"Bearer {self.token}"}
        )
        assert response.status_code == 200, response.text
        text = response.text
        if "data:" in text:
            text = next(line[5:].strip() for line in text.splitlines() if line.startswith("data:"))
        return dict(json.loads(text))

    async def request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        message = {"jsonrpc": "2.0", "id": 2, "method": method, "params": {**params, "_meta": TASK_CAPABLE}}
        headers = {"mcp-protocol-version": MODERN, "mcp-method": method, "accept": ACCEPT}
        if "taskId" in params:
            headers["mcp-name"] = params["taskId"]
        response = await self.browser.post(
            "/mcp", json=message, headers={**headers, "authorization": f"Bearer {self.token}"}
        )
        assert response.status_code == 200, response.text
        return dict(json.loads(response.text))

    async def legacy_session(self) -> dict[str, str]:
        """A 2025-11-25 session that declares URL elicitation: the headers its requests carry."""
        auth = {"authorization": f"Bearer {self.token}", "accept": ACCEPT}
        params = {"protocolVersion": "2025-11-25", "capabilities": {"elicitation": {"url": {}}}}
        init = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {**params, "clientInfo": {"name": "t"}}}
        opened = await self.browser.post("/mcp", json=init, headers=auth)
        return {**auth, "mcp-session-id": opened.headers["mcp-session-id"], "mcp-protocol-version": "2025-11-25"}

    async def connect(self, url: str, provider: OAuthProvider, as_user: str | None = None) -> httpx.Response:
        """Follow a connection link as this browser, through the provider's consent (as `as_user` there)."""
        start = await self.browser.get(url)
        assert start.status_code == 302, start.text
        back = provider.authorize_as(start.headers["location"], as_user or self.name)
        return await self.browser.get(back)


@dataclass
class Rig:
    kit: Any
    upstream: FakeUpstream
    provider: OAuthProvider
    transport: httpx.ASGITransport

    async def user(self, name: str) -> User:
        browser = httpx.AsyncClient(transport=self.transport, base_url=BASE)
        signed = BrowserRig(browser, self.upstream, self.kit)
        client = await signed.register()
        tokens = (await signed.exchange(client["client_id"], await signed.code(client["client_id"], name))).json()
        return User(name, browser, tokens["access_token"])


@pytest.fixture
async def rig(provider: OAuthProvider) -> AsyncIterator[Rig]:
    os.environ["LAMBDA_MCP_TEST_PROVIDER"] = provider.url
    try:
        app = load_app("tests/apps/connected.py")
    finally:
        del os.environ["LAMBDA_MCP_TEST_PROVIDER"]
    kit = build_kit(app, facade_settings(), streaming=True, local=True, stores=Stores.memory())
    upstream = FakeUpstream()
    kit.facade.upstream = upstream
    provider.access_seconds = 3600
    yield Rig(kit, upstream, provider, httpx.ASGITransport(app=kit.asgi()))


def elicitation_url(result: dict[str, Any]) -> tuple[str, str, dict[str, Any]]:
    answer = result["result"]
    assert answer["resultType"] == "input_required", answer
    ((key, request),) = answer["inputRequests"].items()
    assert request["method"] == "elicitation/create" and request["params"]["mode"] == "url"
    return key, request["params"]["url"], answer


async def test_a_user_connects_once_and_the_tool_reads_their_data(rig: Rig) -> None:
    alice = await rig.user("alice")
    key, url, asked = elicitation_url(await alice.call("my_data"))
    assert urlsplit(url).netloc == urlsplit(BASE).netloc and url.startswith(BASE + "/oauth/connections/demo/start?")
    assert "alice" not in url  # the link names no one (sealed state)
    done = await alice.connect(url, rig.provider)
    assert done.status_code == 200 and "You can close this window" in done.text
    authorize = rig.provider.authorize_requests[-1]
    assert authorize["code_challenge_method"] == "S256" and authorize["prompt"] == "consent"
    assert authorize["scope"] == "read:user repo"
    answers = {"inputResponses": {key: {"action": "accept"}}, "requestState": asked["requestState"]}
    result = (await alice.call("my_data", **answers))["result"]
    assert result["content"][0]["text"] == "repos of alice", result
    again = (await alice.call("my_data"))["result"]  # a second call asks nothing
    assert again["content"][0]["text"] == "repos of alice"
    assert rig.provider.code_exchanges["alice"] == 1


async def test_each_user_connects_their_own_account(rig: Rig) -> None:
    alice, bob = await rig.user("alice"), await rig.user("bob")
    for user in (alice, bob):
        key, url, asked = elicitation_url(await user.call("my_data"))
        assert (await user.connect(url, rig.provider)).status_code == 200
        answers = {"inputResponses": {key: {"action": "accept"}}, "requestState": asked["requestState"]}
        assert (await user.call("my_data", **answers))["result"]["content"][0]["text"] == f"repos of {user.name}"
    assert (await alice.call("my_data"))["result"]["content"][0]["text"] == "repos of alice"


async def test_an_expired_token_is_refreshed_silently_and_a_disconnect_asks_again(rig: Rig) -> None:
    alice = await rig.user("alice")
    key, url, asked = elicitation_url(await alice.call("my_data"))
    await alice.connect(url, rig.provider)
    rig.provider.expire_all()
    rig.kit.facade.connection_flow.vault.clock = lambda: __import__("time").time() + 7200  # past its expires_in
    answers = {"inputResponses": {key: {"action": "accept"}}, "requestState": asked["requestState"]}
    assert (await alice.call("my_data", **answers))["result"]["content"][0]["text"] == "repos of alice"
    assert rig.provider.refreshes["alice"] == 1
    assert (await alice.call("forget_demo"))["result"]["content"][0]["text"] == "forgotten"
    elicitation_url(await alice.call("my_data"))  # asks again


async def test_a_declined_elicitation_is_an_exception_the_tool_can_catch(rig: Rig) -> None:
    alice = await rig.user("alice")
    key, _, asked = elicitation_url(await alice.call("my_data_or_none"))
    answers = {"inputResponses": {key: {"action": "decline"}}, "requestState": asked["requestState"]}
    assert (await alice.call("my_data_or_none", **answers))["result"]["content"][0]["text"] == "declined"


async def test_accepting_before_the_flow_is_done_asks_again(rig: Rig) -> None:
    alice = await rig.user("alice")
    key, _, asked = elicitation_url(await alice.call("my_data"))
    answers = {"inputResponses": {key: {"action": "accept"}}, "requestState": asked["requestState"]}
    second_key, _, _ = elicitation_url(await alice.call("my_data", **answers))
    assert second_key != key


async def test_a_link_opened_by_another_user_connects_nothing(rig: Rig) -> None:
    alice, bob = await rig.user("alice"), await rig.user("bob")
    _, url, _ = elicitation_url(await alice.call("my_data"))
    authorizations = len(rig.provider.authorize_requests)
    start = await bob.browser.get(url)  # bob's browser: its cookie names bob, so it signs in again upstream
    assert start.status_code == 302 and start.headers["location"].startswith("https://idp.example/")
    assert "prompt=login" in start.headers["location"]
    state = parse_qs(urlsplit(start.headers["location"]).query)["state"][0]
    refused = await bob.browser.get("/oauth/callback", params={"code": "bob", "state": state})
    assert refused.status_code == 403 and "started by another user" in refused.text
    assert len(rig.provider.authorize_requests) == authorizations  # never sent on to the provider
    assert (await bob.browser.get(url)).status_code == 400  # the link worked once
    elicitation_url(await alice.call("my_data"))  # alice is still not connected


async def test_the_same_user_in_a_fresh_browser_signs_in_again_and_connects(rig: Rig) -> None:
    alice = await rig.user("alice")
    _, url, _ = elicitation_url(await alice.call("my_data"))
    fresh = httpx.AsyncClient(transport=rig.transport, base_url=BASE)
    start = await fresh.get(url)
    state = parse_qs(urlsplit(start.headers["location"]).query)["state"][0]
    to_provider = await fresh.get("/oauth/callback", params={"code": "alice", "state": state})
    assert to_provider.status_code == 302 and to_provider.headers["location"].startswith(rig.provider.url)
    done = await fresh.get(rig.provider.authorize_as(to_provider.headers["location"], "alice"))
    assert done.status_code == 200 and "Connected to demo" in done.text
    assert (await alice.call("my_data"))["result"]["content"][0]["text"] == "repos of alice"


async def test_a_task_asks_with_input_required_then_completes(rig: Rig) -> None:
    alice = await rig.user("alice")
    created = (await alice.call("my_data_later", tasks=True))["result"]
    task_id = created.get("taskId") or created["task"]["taskId"]
    task = await poll(alice, task_id, "input_required")
    ((key, request),) = task["inputRequests"].items()
    assert request["params"]["mode"] == "url"
    await alice.connect(request["params"]["url"], rig.provider)
    await alice.request("tasks/update", {"taskId": task_id, "inputResponses": {key: {"action": "accept"}}})
    done = await poll(alice, task_id, "completed")
    assert done["result"]["content"][0]["text"] == "repos of alice"


async def poll(user: User, task_id: str, status: str) -> dict[str, Any]:
    for _ in range(100):
        task = (await user.request("tasks/get", {"taskId": task_id}))["result"]
        if task["status"] == status:
            return dict(task)
        assert task["status"] in ("working", "input_required"), task
        await asyncio.sleep(0.05)
    raise AssertionError(f"task {task_id} never reached {status}: {task}")


async def test_no_token_is_in_any_answer_or_log_line(rig: Rig, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    alice = await rig.user("alice")
    key, url, asked = elicitation_url(await alice.call("my_data"))
    done = await alice.connect(url, rig.provider)
    answers = {"inputResponses": {key: {"action": "accept"}}, "requestState": asked["requestState"]}
    result = await alice.call("my_data", **answers)
    tokens = rig.provider.access_tokens("alice")
    assert tokens
    for token in tokens:
        assert token not in json.dumps(result) and token not in done.text and token not in caplog.text
    assert "demo-secret" not in caplog.text


async def test_on_2025_11_25_outside_a_task_the_call_ends_with_32042_and_the_retry_succeeds(rig: Rig) -> None:
    alice = await rig.user("alice")
    session = await alice.legacy_session()
    call = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "my_data", "arguments": {}}}

    async def answer() -> dict[str, Any]:
        response = await alice.browser.post("/mcp", json=call, headers=session)
        text = response.text
        if "data:" in text:
            text = [line[5:].strip() for line in text.splitlines() if line.startswith("data:")][-1]
        return dict(json.loads(text))

    refused = (await answer())["error"]
    assert refused["code"] == -32042
    (elicitation,) = refused["data"]["elicitations"]
    assert elicitation["mode"] == "url" and elicitation["elicitationId"]
    assert (await alice.connect(elicitation["url"], rig.provider)).status_code == 200
    assert (await answer())["result"]["content"][0]["text"] == "repos of alice"


async def test_the_upstream_token_is_refreshed_once_and_kept_until_it_expires(rig: Rig) -> None:
    alice = await rig.user("alice")
    first = (await alice.call("upstream_length"))["result"]
    assert first["content"][0]["text"] == str(len("upstream-secret-token")), first
    assert len(rig.upstream.refreshed) == 1
    assert (await alice.call("upstream_length"))["result"]["content"][0]["text"] == first["content"][0]["text"]
    assert len(rig.upstream.refreshed) == 1  # kept (sealed) in the sign-in's row until it nears expiry
    rig.upstream.disabled.add("alice")
    rig.kit.facade.clock = lambda: __import__("time").time() + 400  # the kept one is past its 300 s
    refused = (await alice.call("upstream_length"))["result"]
    assert refused["isError"] and "sign in again" in refused["content"][0]["text"]


async def test_a_machine_client_has_no_connections(rig: Rig) -> None:
    from lambda_mcp.server.credentials import CredentialsUnavailable

    class Machine:
        principal = f"client:{BASE}#agent-1"

    with pytest.raises(CredentialsUnavailable, match="not a person"):
        await rig.kit.facade.credentials.connection(Machine(), "demo")


async def test_an_operator_revokes_a_users_connection_with_the_cli(rig: Rig, tmp_path: Any) -> None:
    """`lambda-mcp connections revoke` deletes the row the vault keeps (here against the same in-memory store,
    through the command's own code path with the store swapped in)."""
    from lambda_mcp import connections_cli

    alice = await rig.user("alice")
    key, url, asked = elicitation_url(await alice.call("my_data"))
    await alice.connect(url, rig.provider)
    store = rig.kit.facade.store

    class Table:
        def __init__(self, name: str) -> None:
            assert name == "state-table"

        async def delete(self, kind: str, key: str) -> None:
            await store.delete(kind, key)

    import lambda_mcp.storage.dynamodb.facade as dynamodb_facade

    original = dynamodb_facade.DynamoDBFacadeStore
    dynamodb_facade.DynamoDBFacadeStore = Table  # type: ignore[misc,assignment]
    try:
        bare = ["revoke", "--subject", "alice", "--table", "state-table"]
        assert connections_cli.main(bare) == 2  # a bare subject needs --issuer
        revoke = [*bare, "--issuer", BASE, "--app", "tests/apps/connected.py"]  # every connection the app declares
        assert await asyncio.to_thread(connections_cli.main, revoke) == 0  # it runs its own event loop
    finally:
        dynamodb_facade.DynamoDBFacadeStore = original  # type: ignore[misc]
    elicitation_url(await alice.call("my_data"))  # asks again


async def test_a_2025_11_25_session_is_told_its_elicitation_completed(provider: OAuthProvider) -> None:
    """Buffered (as in Lambda): the session's GET poll after the flow carries `notifications/elicitation/
    complete` with the id the -32042 named; another session of another user hears nothing."""
    os.environ["LAMBDA_MCP_TEST_PROVIDER"] = provider.url
    try:
        app = load_app("tests/apps/connected.py")
    finally:
        del os.environ["LAMBDA_MCP_TEST_PROVIDER"]
    settings = facade_settings(LAMBDA_MCP_GET_STREAM_SECONDS="0.2")
    kit = build_kit(app, settings, streaming=False, local=True, stores=Stores.memory())
    kit.facade.upstream = FakeUpstream()
    rig = Rig(kit, kit.facade.upstream, provider, httpx.ASGITransport(app=kit.asgi()))
    alice, bob = await rig.user("alice"), await rig.user("bob")
    sessions = {user.name: await user.legacy_session() for user in (alice, bob)}

    async def poll(user: User, cursor: str | None) -> tuple[list[dict[str, Any]], str]:
        headers = {**sessions[user.name], "accept": "text/event-stream"}
        if cursor:
            headers["last-event-id"] = cursor
        response = await user.browser.get("/mcp", headers=headers)
        assert response.status_code == 200, response.text
        ids = [line[4:] for line in response.text.splitlines() if line.startswith("id: ")]
        data = [
            json.loads(line[5:]) for line in response.text.splitlines() if line.startswith("data:") and line[5:].strip()
        ]
        return data, ids[-1]

    _, alice_cursor = await poll(alice, None)
    _, bob_cursor = await poll(bob, None)
    call = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "my_data", "arguments": {}}}
    refused = (await alice.browser.post("/mcp", json=call, headers=sessions["alice"])).json()["error"]
    (elicitation,) = refused["data"]["elicitations"]
    assert (await alice.connect(elicitation["url"], provider)).status_code == 200
    told, _ = await poll(alice, alice_cursor)
    complete = {"jsonrpc": "2.0", "method": "notifications/elicitation/complete"}
    assert {**complete, "params": {"elicitationId": elicitation["elicitationId"]}} in told, told
    heard, _ = await poll(bob, bob_cursor)
    assert not [m for m in heard if m.get("method") == "notifications/elicitation/complete"], heard


async def test_a_signed_in_user_sees_and_removes_connections_on_the_connections_page(rig: Rig) -> None:
    alice = await rig.user("alice")
    page = await alice.browser.get("/oauth/connections")
    assert page.status_code == 200 and "demo</b>: not connected" in page.text
    assert page.headers["x-frame-options"] == "DENY" and page.headers["cache-control"] == "no-store"
    key, url, asked = elicitation_url(await alice.call("my_data"))
    await alice.connect(url, rig.provider)
    page = await alice.browser.get("/oauth/connections")
    assert "demo</b>: connected" in page.text
    token = page.text.split('name="token" value="', 1)[1].split('"', 1)[0]
    forged = await alice.browser.post("/oauth/connections/demo/disconnect", data={"token": "x" * 64})
    assert forged.status_code == 403
    stranger = httpx.AsyncClient(transport=rig.transport, base_url=BASE)  # no sign-in cookie
    assert (await stranger.post("/oauth/connections/demo/disconnect", data={"token": token})).status_code == 403
    assert "Sign in" in (await stranger.get("/oauth/connections")).text
    removed = await alice.browser.post("/oauth/connections/demo/disconnect", data={"token": token})
    assert removed.status_code == 303 and removed.headers["location"] == "/oauth/connections"
    assert "demo</b>: not connected" in (await alice.browser.get("/oauth/connections")).text
    elicitation_url(await alice.call("my_data"))  # asks again


class ExchangingUpstream(FakeUpstream):
    """The stand-in upstream, with RFC 8693 token exchange (or without, when `offers` is False)."""

    offers: bool = True
    exchanges: list[tuple[str, str, list[str]]] = []

    def exchange_token(self, subject_token: str, audience: str, scopes: list[str]) -> dict[str, Any]:
        from lambda_mcp.facade.upstream import UpstreamError

        if not self.offers:
            raise UpstreamError("no token exchange", "unsupported_grant_type")
        self.exchanges.append((subject_token, audience, scopes))
        return {"access_token": f"for-{audience}", "expires_in": 600, "issued_token_type": "access_token"}


async def test_a_token_is_exchanged_for_another_api_once_and_kept(rig: Rig) -> None:
    upstream = ExchangingUpstream()
    upstream.exchanges = []
    rig.kit.facade.upstream = upstream
    rig.upstream = upstream
    alice = await rig.user("alice")
    for _ in range(2):
        answer = (await alice.call("downstream_length", arguments={"audience": "https://orders.example"}))["result"]
        assert answer["content"][0]["text"] == str(len("for-https://orders.example")), answer
    assert upstream.exchanges == [("upstream-secret-token", "https://orders.example", ["orders:read"])]
    other = (await alice.call("downstream_length", arguments={"audience": "https://billing.example"}))["result"]
    assert other["content"][0]["text"] == str(len("for-https://billing.example"))
    assert len(upstream.exchanges) == 2
    upstream.offers = False
    refused = (await alice.call("downstream_length", arguments={"audience": "https://hr.example"}))["result"]
    assert refused["isError"] and "does not support token exchange" in refused["content"][0]["text"]
