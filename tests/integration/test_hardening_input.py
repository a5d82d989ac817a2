"""Hostile and malformed input, in process: every refusal is a clear 4xx (or a JSON-RPC error), never a 5xx,
and nothing is stored for it. Each test is one finding of the hardening review (issue 13)."""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator
from typing import Any

import pytest

from lambda_mcp.config import Settings
from lambda_mcp.kit import Kit, Stores, build_kit
from lambda_mcp.loader import load_app
from lambda_mcp.protocol.ids import ChangesCursor, change_cursor
from lambda_mcp.protocol.limits import MAX_BATCH, MAX_SUBSCRIPTIONS
from lambda_mcp.server.app import MCPApp
from lambda_mcp.storage.memory import InMemorySessionStore
from tests.support.client import Exchange, MCPTestClient
from tests.support.issuer import LocalIssuer
from tests.support.processes import ROOT

pytestmark = pytest.mark.anyio
TASKS = {"tasks": {}}
RESOURCE = "http://127.0.0.1:8000/mcp"


def _kit(streaming: bool = False, **settings: Any) -> Kit:
    app = load_app(str(ROOT / "tests/apps/hardened.py"))
    return build_kit(app, Settings(state_key=b"k", **settings), streaming=streaming, local=True)


@pytest.fixture
async def mcp() -> AsyncIterator[MCPTestClient]:
    client = MCPTestClient(_kit())
    yield client
    await client.close()


def _sessions(kit: Kit) -> int:
    store = kit.sessions
    assert isinstance(store, InMemorySessionStore)
    return len(store._items)


# -- amplification -------------------------------------------------------------------------------
async def test_a_batch_holds_at_most_32_messages(mcp: MCPTestClient) -> None:
    await mcp.initialize("2025-03-26")
    cancels = [{"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": i}} for i in range(1000)]
    refused = await mcp.send("POST", json.dumps(cancels), mcp.legacy_headers())
    assert refused.status == 400 and f"at most {MAX_BATCH}" in refused.error["message"]
    taken = await mcp.send("POST", json.dumps(cancels[:MAX_BATCH]), mcp.legacy_headers())
    assert taken.status == 202


async def test_a_cancel_for_a_request_id_the_session_never_used_stores_nothing(mcp: MCPTestClient) -> None:
    await mcp.initialize()
    calls = mcp.kit.stores.calls
    for request_id in ("never-used", 12345, "x" * 128):
        notice = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": request_id}}
        assert (await mcp.send("POST", json.dumps(notice), mcp.legacy_headers())).status == 202
    assert calls._items == {}  # type: ignore[attr-defined]


async def test_subscriptions_per_session_are_capped(mcp: MCPTestClient) -> None:
    await mcp.initialize()
    for index in range(MAX_SUBSCRIPTIONS):
        assert (await mcp.legacy("resources/subscribe", {"uri": f"files://docs/n{index}.txt"})).result == {}
    again = await mcp.legacy("resources/subscribe", {"uri": "files://docs/n0.txt"})
    assert again.result == {}  # subscribing again to one held is no new subscription
    over = await mcp.legacy("resources/subscribe", {"uri": "files://docs/one-more.txt"})
    assert over.error["code"] == -32602 and f"at most {MAX_SUBSCRIPTIONS}" in over.error["message"]
    session = await mcp.kit.sessions.get(mcp.session_id or "", time.time())
    assert session is not None and len(session.subscriptions) == MAX_SUBSCRIPTIONS
    for length in (600, 3000):  # over the subscribed-URI cap (512), and over the URI cap (2048)
        long_uri = await mcp.legacy("resources/subscribe", {"uri": "files://docs/" + "a" * length + ".txt"})
        assert long_uri.error["code"] == -32602 and "characters" in long_uri.error["message"]


async def test_initialize_with_oversized_client_data_is_refused_and_stores_no_session(mcp: MCPTestClient) -> None:
    params = {
        "protocolVersion": "2025-11-25",
        "capabilities": {"experimental": {"junk": "x" * 300_000}},
        "clientInfo": {"name": "t", "version": "1"},
    }
    refused = await mcp.send("POST", json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": params}))
    assert refused.error["code"] == -32602 and "mcp-session-id" not in refused.headers
    assert _sessions(mcp.kit) == 0


async def test_a_task_with_oversized_arguments_is_refused_and_nothing_is_stored() -> None:
    mcp = MCPTestClient(_kit(streaming=True))
    try:
        await mcp.initialize(capabilities=TASKS)
        junk = {"name": "quick", "arguments": {"label": "x" * 380_000}, "task": {"ttl": 60000}}
        refused = await mcp.legacy("tools/call", junk)
        assert refused.error["code"] == -32602 and "arguments" in refused.error["message"]
        assert mcp.kit.task_runtime is not None
        owned, _ = await mcp.kit.task_runtime.store.list_owned(f"session:{mcp.session_id}", time.time())
        assert owned == []
    finally:
        await mcp.close()


# -- ReDoS ------------------------------------------------------------------------------------------
async def test_a_template_matches_a_hostile_uri_in_linear_time(mcp: MCPTestClient) -> None:
    started = time.perf_counter()
    read = await mcp.modern("resources/read", {"uri": "files://docs/" + "a." * 1000 + "/"})  # 2 KB, no match
    assert read.error["code"] == -32602
    hostile = "files://docs/" + "a." * 1000  # just under the 2048-character URI cap
    assert (await mcp.modern("resources/read", {"uri": hostile})).result["contents"][0]["text"].startswith("a|")
    assert time.perf_counter() - started < 1.0  # the backtracking pattern took seconds on 40 KB


def test_adjacent_template_variables_are_refused_at_registration() -> None:
    app = MCPApp("t")
    with pytest.raises(ValueError, match=r"adjacent variables \{a\}\{b\}"):
        app.resource("x://{a}{b}")(lambda a, b: "")


# -- the change feed: no replay from before a session, principals kept apart ----------------------
def _listen_headers(client: MCPTestClient, last_event_id: str) -> dict[str, str]:
    return {**client.legacy_headers(), "accept": "text/event-stream", "last-event-id": last_event_id}


def _updated(exchange: Exchange) -> list[str]:
    assert exchange.status == 200, exchange.text
    return [m["params"]["uri"] for m in exchange.messages if m.get("method") == "notifications/resources/updated"]


async def test_a_get_stream_cannot_replay_changes_published_before_its_session() -> None:
    kit = _kit()
    publisher, listener = MCPTestClient(kit), MCPTestClient(kit)
    try:
        await publisher.initialize()
        await publisher.legacy("tools/call", {"name": "announce", "arguments": {"uri": "files://docs/old.txt"}})
        await listener.initialize()
        assert (await listener.legacy("resources/subscribe", {"uri": "files://docs/old.txt"})).result == {}
        from_the_epoch = ChangesCursor(change_cursor(0)).format()
        replayed = await listener.send("GET", b"", _listen_headers(listener, from_the_epoch))
        assert _updated(replayed) == []  # read from the session's creation, not from the epoch
        await publisher.legacy("tools/call", {"name": "announce", "arguments": {"uri": "files://docs/old.txt"}})
        assert replayed.last_event_id is not None
        later = await listener.send("GET", b"", _listen_headers(listener, replayed.last_event_id))
        assert _updated(later) == ["files://docs/old.txt"]
    finally:
        await publisher.close()
        await listener.close()


async def test_the_subscription_filter_and_principal_scoped_updates_keep_principals_apart() -> None:
    issuer = LocalIssuer()
    app = load_app(str(ROOT / "tests/apps/hardened.py"))
    settings = Settings(state_key=b"k", auth="jwt", auth_issuer=issuer.url)
    kit = build_kit(app, settings, streaming=False, local=True)
    alice, bob = MCPTestClient(kit), MCPTestClient(kit)
    try:
        for client, sub in ((alice, "alice"), (bob, "bob")):
            client.headers["authorization"] = "Bearer " + issuer.token(RESOURCE, sub=sub, scope=None)
            await client.initialize()
            assert (await client.legacy("resources/subscribe", {"uri": "files://docs/shared.txt"})).result == {}
        assert (await alice.legacy("resources/subscribe", {"uri": "secret://alice/notes"})).result == {}
        refused = await alice.legacy("resources/subscribe", {"uri": "secret://bob/notes"})
        assert refused.error["code"] == -32602 and "Not allowed" in refused.error["message"]
        cursors = {}
        for client in (alice, bob):
            opened = await client.send("GET", b"", {**client.legacy_headers(), "accept": "text/event-stream"})
            assert _updated(opened) == [] and opened.last_event_id is not None
            cursors[id(client)] = opened.last_event_id
        for_bob = {"uri": "files://docs/shared.txt", "principal": f"{issuer.url}#bob"}
        await alice.legacy("tools/call", {"name": "announce", "arguments": for_bob})
        seen = {
            name: _updated(await client.send("GET", b"", _listen_headers(client, cursors[id(client)])))
            for name, client in (("alice", alice), ("bob", bob))
        }
        assert seen == {"alice": [], "bob": ["files://docs/shared.txt"]}
    finally:
        await alice.close()
        await bob.close()
        issuer.stop()


async def test_a_2026_listen_acknowledges_only_the_uris_the_filter_allows_and_at_most_32(mcp: MCPTestClient) -> None:
    wanted = ["secret://anyone/notes", "secret://bob/notes", "files://docs/" + "a" * 3000 + ".txt"]
    wanted += [f"files://docs/n{i}.txt" for i in range(40)]
    exchange = await mcp.modern("subscriptions/listen", {"notifications": {"resourceSubscriptions": wanted}})
    acknowledged = exchange.messages[0]["params"]["notifications"]["resourceSubscriptions"]
    assert acknowledged[0] == "secret://anyone/notes" and "secret://bob/notes" not in acknowledged
    assert len(acknowledged) == MAX_SUBSCRIPTIONS - 1 and all(len(uri) < 100 for uri in acknowledged)


# -- malformed input -------------------------------------------------------------------------------
async def test_deeply_nested_json_is_a_parse_error_not_a_crash(mcp: MCPTestClient) -> None:
    for body in (b"[" * 200_000, b"[" * 100 + b"]" * 100, json.dumps({"a": [[[[[[[[[[1]]]]]]]]]]}).encode() * 1):
        answered = await mcp.send("POST", body, {"mcp-protocol-version": "2026-07-28"})
        assert answered.status == 400, body[:20]
    assert (await mcp.send("POST", b"[" * 100 + b"]" * 100)).error["code"] == -32700


async def test_a_request_state_with_a_non_ascii_mac_is_invalid_params(mcp: MCPTestClient) -> None:
    first = await mcp.modern(
        "tools/call",
        {"name": "careless", "arguments": {}},
        meta={"io.modelcontextprotocol/clientCapabilities": {"elicitation": {}}},
    )
    state = first.result["requestState"]
    forged = state.rsplit(".", 1)[0] + ".ümlaut"
    params = {"name": "careless", "arguments": {}, "requestState": forged, "inputResponses": {}}
    answered = await mcp.modern(
        "tools/call", params, meta={"io.modelcontextprotocol/clientCapabilities": {"elicitation": {}}}
    )
    assert answered.status == 200 and answered.error["code"] == -32602


async def test_over_long_ids_never_reach_storage_keys(mcp: MCPTestClient) -> None:
    await mcp.initialize()
    long_id = {"jsonrpc": "2.0", "id": "r" * 2000, "method": "ping"}
    refused = await mcp.send("POST", json.dumps(long_id), mcp.legacy_headers())
    assert refused.status == 400 and refused.error["code"] == -32600
    cancel = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": "r" * 2000}}
    assert (await mcp.send("POST", json.dumps(cancel), mcp.legacy_headers())).status == 202
    for session_id in ("s" * 2000, "a b", "x\t"):
        gone = await mcp.legacy("ping", headers={"mcp-session-id": session_id})
        assert gone.status == 404
    too_long_task = await mcp.legacy("tasks/get", {"taskId": "t" * 2000})
    assert too_long_task.status == 200 and "error" in too_long_task.body
    assert (await mcp.send("GET", b"", {**mcp.legacy_headers(), "last-event-id": "e" * 5000})).status == 404


# -- control flow and configuration ------------------------------------------------------------
async def test_a_handlers_except_exception_does_not_swallow_a_suspension(mcp: MCPTestClient) -> None:
    capabilities = {"io.modelcontextprotocol/clientCapabilities": {"elicitation": {}}}
    modern = await mcp.modern("tools/call", {"name": "careless", "arguments": {}}, meta=capabilities)
    assert modern.result["resultType"] == "input_required"  # MRTR: suspended, not "swallowed"
    await mcp.initialize(capabilities={"elicitation": {}})
    legacy = await mcp.legacy("tools/call", {"name": "careless", "arguments": {}})
    asks = [m for m in legacy.messages if m.get("method") == "elicitation/create"]
    assert len(asks) == 1 and "result" not in legacy.messages[-1]  # buffered: the call suspended


async def test_two_kits_on_one_app_keep_their_own_change_logs() -> None:
    app = load_app(str(ROOT / "tests/apps/hardened.py"))
    first, second = Stores.memory(), Stores.memory()
    clients = [
        MCPTestClient(build_kit(app, Settings(state_key=b"k"), streaming=False, local=True, stores=stores))
        for stores in (first, second)
    ]
    try:
        await clients[0].modern("tools/call", {"name": "announce", "arguments": {"uri": "files://docs/a.txt"}})
        assert [c.uri for c in await first.changes.since("0", time.time())] == ["files://docs/a.txt"]
        assert await second.changes.since("0", time.time()) == []
        assert not hasattr(app.changes, "log")  # the app is not rewired by a kit
    finally:
        for client in clients:
            await client.close()


def test_flags_read_the_same_words_everywhere() -> None:
    for off in ("0", "false", "off", "no"):
        settings = Settings.from_env(
            {"LAMBDA_MCP_TRUST_EVENT_DOMAIN": off, "LAMBDA_MCP_GET_STREAM": off}, default_auth="none"
        )
        assert settings.trust_event_domain is False and settings.get_stream is False


async def test_a_session_of_another_revision_is_never_served_a_batch(mcp: MCPTestClient) -> None:
    await mcp.initialize("2025-06-18")
    batch = [{"jsonrpc": "2.0", "id": 5, "method": "ping"}]
    headers = {"mcp-session-id": mcp.session_id or ""}  # no version header: it could pass for 2025-03-26
    refused = await mcp.send("POST", json.dumps(batch), headers)
    assert refused.status == 400 and "2025-03-26" in refused.error["message"]


async def test_an_ipv6_loopback_host_is_allowed_in_dev(mcp: MCPTestClient) -> None:
    assert (await mcp.modern("tools/list", headers={"host": "[::1]:8000"})).status == 200
    assert (await mcp.modern("tools/list", headers={"host": "1:8000"})).status == 403  # no bracket-class match
