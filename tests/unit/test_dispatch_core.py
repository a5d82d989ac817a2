"""The dispatcher, the handler runner and the front, each built directly (no kit, no HTTP server): the
exception-to-wire boundary, the replay ledger of a re-run call, and a front that reads without writing."""

from __future__ import annotations

import json
from typing import Any

import pytest
from starlette.requests import Request

from lambda_mcp import Context, MCPApp
from lambda_mcp.config import Settings
from lambda_mcp.dispatch.context import Channel, RequestContext
from lambda_mcp.dispatch.dispatcher import Dispatcher
from lambda_mcp.dispatch.request_state import StateSealer
from lambda_mcp.dispatch.rounds import BufferedRound, Recorded
from lambda_mcp.dispatch.runner import HandlerRunner
from lambda_mcp.protocol.ids import CallStream
from lambda_mcp.protocol.jsonrpc import classify
from lambda_mcp.server.suspensions import CallSuspended
from lambda_mcp.storage.errors import StorageUnavailable
from lambda_mcp.storage.memory import InMemoryCallStore, InMemorySessionStore
from lambda_mcp.transport.access import Access
from lambda_mcp.transport.front import Front
from lambda_mcp.transport.inbound import Answered, Call
from lambda_mcp.transport.request import McpRequest

pytestmark = pytest.mark.anyio
MODERN = RequestContext("modern", "2026-07-28", {"elicitation": {}}, request_id=1)
SCHEMA = {"type": "object", "properties": {"name": {"type": "string"}}}
LOGS = {"io.modelcontextprotocol/logLevel": "info"}

app = MCPApp("core")


@app.tool()
async def greet(ctx: Context) -> str:
    await ctx.info("asking")
    first = await ctx.elicit("First?", SCHEMA)
    second = await ctx.elicit("Second?", SCHEMA)
    return f"{first['content']['name']}/{second['content']['name']}"


@app.tool()
def broken() -> str:
    raise KeyError("internal detail")


@app.tool()
def storage_down() -> str:
    raise StorageUnavailable("throttled")


@app.tool(scopes=["admin"])
def admin_only() -> str:
    return "admin"


def _dispatcher() -> Dispatcher:
    return Dispatcher(app, InMemorySessionStore(), HandlerRunner(app, StateSealer(b"k")), InMemoryCallStore())


def _call(name: str, rid: int = 1, **params: Any) -> Any:
    return classify({"jsonrpc": "2.0", "id": rid, "method": "tools/call", "params": {"name": name, **params}})


# -- the dispatcher: one request in, one reply out -------------------------------------------------
async def test_every_failure_is_a_json_rpc_error_with_the_eras_status() -> None:
    dispatcher = _dispatcher()
    unknown = classify({"jsonrpc": "2.0", "id": 1, "method": "nope/nothing"})
    reply = await dispatcher.handle(unknown, MODERN, Channel())
    assert reply.response is not None and reply.response["error"]["code"] == -32601
    reply = await dispatcher.handle(_call("broken"), MODERN, Channel())
    assert reply.response is not None and "internal detail" not in json.dumps(reply.response)
    assert reply.response["result"]["isError"] is True  # a tool's own exception is its error result
    reply = await dispatcher.handle(_call("storage_down"), MODERN, Channel())
    assert reply.status == 503  # the kit's storage failing is never the tool's failure
    scoped = RequestContext("modern", "2026-07-28", {}, principal="p", scopes=frozenset(), request_id=1)
    reply = await dispatcher.handle(_call("admin_only"), scoped, Channel())
    assert reply.status == 403 and reply.response is not None
    assert reply.response["error"]["data"] == {"requiredScopes": ["admin"]}


async def test_initialize_opens_a_session_and_a_cancelled_request_gets_no_reply() -> None:
    dispatcher = _dispatcher()
    params = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}
    message = classify({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": params})
    reply = await dispatcher.handle(message, RequestContext("legacy", "2025-11-25", request_id=1), Channel())
    assert reply.session is not None and reply.session.protocol_version == "2025-06-18"
    cancelled = await dispatcher.handle(_call("admin_only"), MODERN, Channel(is_cancelled=lambda: True))
    assert cancelled.response is None


# -- the runner and the replay ledger ---------------------------------------------------------------
async def test_a_modern_rerun_replays_answers_and_does_not_resend_what_was_delivered() -> None:
    dispatcher, sent = _dispatcher(), []

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    first = await dispatcher.handle(_call("greet", _meta=LOGS), MODERN, Channel(send=send))
    result = first.response["result"] if first.response else {}
    assert result["resultType"] == "input_required" and list(result["inputRequests"]) == ["elicit"]
    assert [m["method"] for m in sent] == ["notifications/message"]
    answers = {"elicit": {"action": "accept", "content": {"name": "A"}}}
    second = await dispatcher.handle(
        _call("greet", requestState=result["requestState"], inputResponses=answers, _meta=LOGS),
        MODERN,
        Channel(send=send),
    )
    result = second.response["result"] if second.response else {}
    assert list(result["inputRequests"]) == ["elicit#2"]  # the second question has a key of its own
    assert len(sent) == 1  # the log line of the first round is not sent again
    answers = {"elicit#2": {"action": "accept", "content": {"name": "B"}}}
    third = await dispatcher.handle(
        _call("greet", requestState=result["requestState"], inputResponses=answers, _meta=LOGS),
        MODERN,
        Channel(send=send),
    )
    assert third.response is not None and third.response["result"]["content"][0]["text"] == "A/B"


async def test_a_buffered_legacy_run_stops_at_the_first_question_without_an_answer() -> None:
    dispatcher = _dispatcher()
    context = RequestContext("legacy", "2025-11-25", {"elicitation": {}}, request_id=7)
    stream = CallStream(7)
    answered = Recorded({"elicit": {"result": {"action": "accept", "content": {"name": "A"}}}}, delivered=2)
    sent: list[dict[str, Any]] = []

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    round_ = BufferedRound(stream, "nonce", answered)
    with pytest.raises(CallSuspended) as suspended:
        await dispatcher.handle(_call("greet", rid=7), context, Channel(send=send, round=round_))
    assert suspended.value.awaiting == ("elicit#2",) and suspended.value.checkpoints == 0
    # the run sends every message in order (the transport's outbox drops the delivered ones)
    assert [m.get("method") for m in sent] == ["notifications/message", "elicitation/create", "elicitation/create"]
    assert sent[2]["id"] == round_.request_id("elicit#2") and "nonce" in sent[2]["id"]


# -- the front: reads, never writes ------------------------------------------------------------------
class Writes(InMemorySessionStore):
    """A session store that fails the test on any write."""

    async def touch(self, *args: Any) -> None:
        raise AssertionError("the front wrote a session touch")

    async def create(self, *args: Any) -> None:
        raise AssertionError("the front created a session")


def _request(body: dict[str, Any] | list[Any], **headers: str) -> Request:
    raw = json.dumps(body).encode()
    sent = {"host": "127.0.0.1:8000", "content-type": "application/json", "accept": "application/json", **headers}

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": raw, "more_body": False}

    scope = {
        "type": "http",
        "method": "POST",
        "path": "/mcp",
        "headers": [(k.encode(), v.encode()) for k, v in sent.items()],
        "query_string": b"",
    }
    return McpRequest(scope, receive)


async def test_the_front_types_a_request_or_answers_it_itself_without_writing() -> None:
    settings = Settings(state_key=b"k")
    front = Front(app, Writes(), settings, Access(app, settings), default_hosts=("127.0.0.1:*",))
    meta = {"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}}
    body = {"jsonrpc": "2.0", "id": 3, "method": "tools/list", "params": {"_meta": meta}}
    read = await front.read(_request(body, **{"mcp-protocol-version": "2026-07-28", "mcp-method": "tools/list"}))
    assert isinstance(read, Call) and read.context.era == "modern" and read.context.request_id == 3
    legacy = {"jsonrpc": "2.0", "id": 4, "method": "tools/list"}
    refused = await front.read(_request(legacy, **{"mcp-session-id": "no-such-session"}))
    assert isinstance(refused, Answered) and refused.response.status_code == 404
    batch = [legacy, {**legacy, "id": 5}]
    refused = await front.read(_request(batch, **{"mcp-protocol-version": "2025-06-18"}))
    assert isinstance(refused, Answered) and refused.response.status_code == 400
    wrong_host = await front.read(_request(body, host="evil.example.com"))
    assert isinstance(wrong_host, Answered) and wrong_host.response.status_code == 403
