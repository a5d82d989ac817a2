"""Legacy server-to-client requests on the buffered (Lambda) transport, across instances.

Two kits share one set of stores, as two Lambda instances share the state table: every follow-up
(the answer POST, the resuming GET) goes to the other instance. A suspended call ends its response
with the request and `retry:`; the call is re-run from the top with the recorded answers, and what
an earlier response carried is not sent again. Every server message is schema-checked.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest

from lambda_mcp.config import Settings
from lambda_mcp.kit import Stores, build_kit
from lambda_mcp.loader import load_app
from lambda_mcp.protocol.ids import CallStream
from lambda_mcp.transport.buffered import calls as suspended_calls
from tests.support.polling import until
from tests.support.processes import ROOT
from tests.support.recorder import Recorder

pytestmark = pytest.mark.anyio
VERSION = "2025-11-25"


class Instances:
    """Two buffered kits on shared stores; `next()` alternates between them."""

    def __init__(self) -> None:
        app = load_app(str(ROOT / "tests/apps/interaction.py"))
        shared = self.stores = Stores.memory()
        settings = Settings(state_key=b"k", retry_ms=50)
        self.clients = [
            httpx.AsyncClient(
                transport=httpx.ASGITransport(
                    app=build_kit(app, settings, streaming=False, local=True, stores=shared).asgi()
                ),
                base_url="http://127.0.0.1:8000",
            )
            for _ in range(2)
        ]
        self.turn = 0
        self.recorder = Recorder()

    async def send(
        self, method: str, body: dict[str, Any] | None, headers: dict[str, str]
    ) -> tuple[httpx.Response, list[dict[str, Any]]]:
        client = self.clients[self.turn % 2]
        self.turn += 1
        request_headers = {"content-type": "application/json", "host": "127.0.0.1:8000", **headers}
        content = json.dumps(body).encode() if body is not None else b""
        response = await client.request(method, "/mcp", content=content, headers=request_headers)
        response_headers = {k.lower(): v for k, v in response.headers.items()}
        messages = self.recorder.exchange(
            request_headers, content, response.status_code, response_headers, response.content
        )
        return response, messages


class Session:
    def __init__(self, instances: Instances, session_id: str, accept: str) -> None:
        self.instances = instances
        self.session_id = session_id
        self.accept = accept
        self.ids = 100
        self.last_event_id: str | None = None

    @classmethod
    async def start(
        cls, instances: Instances, capabilities: dict[str, Any], accept: str = "application/json, text/event-stream"
    ) -> Session:
        params = {"protocolVersion": VERSION, "capabilities": capabilities, "clientInfo": {"name": "t", "version": "1"}}
        response, _ = await instances.send(
            "POST", {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": params}, {"accept": accept}
        )
        return cls(instances, response.headers["mcp-session-id"], accept)

    def headers(self, **extra: str) -> dict[str, str]:
        return {"accept": self.accept, "mcp-session-id": self.session_id, "mcp-protocol-version": VERSION, **extra}

    def _track(self, response: httpx.Response) -> None:
        ids = [line[4:].strip() for line in response.text.splitlines() if line.startswith("id: ")]
        self.last_event_id = ids[-1] if ids else None

    async def call(self, name: str, arguments: dict[str, Any] | None = None) -> list[dict[str, Any]]:
        self.ids += 1
        body = {
            "jsonrpc": "2.0",
            "id": self.ids,
            "method": "tools/call",
            "params": {"name": name, "arguments": arguments or {}},
        }
        response, messages = await self.instances.send("POST", body, self.headers())
        self._track(response)
        return messages

    async def answer(
        self, request: dict[str, Any], result: dict[str, Any] | None = None, error: dict[str, Any] | None = None
    ) -> int:
        body: dict[str, Any] = {"jsonrpc": "2.0", "id": request["id"]}
        body.update({"error": error} if error is not None else {"result": result or {}})
        response, _ = await self.instances.send("POST", body, self.headers())
        return response.status_code

    async def resume(self) -> tuple[httpx.Response, list[dict[str, Any]]]:
        assert self.last_event_id is not None
        response, messages = await self.instances.send(
            "GET", None, self.headers(accept="text/event-stream", **{"last-event-id": self.last_event_id})
        )
        self._track(response)
        return response, messages

    async def notify(self, method: str, params: dict[str, Any]) -> int:
        response, _ = await self.instances.send(
            "POST", {"jsonrpc": "2.0", "method": method, "params": params}, self.headers()
        )
        return response.status_code


@pytest.fixture
async def instances() -> AsyncIterator[Instances]:
    pair = Instances()
    yield pair
    for client in pair.clients:
        await client.aclose()
    assert pair.recorder.violations == [], pair.recorder.violations


def _requests(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [m for m in messages if "method" in m and "id" in m]


def _notes(messages: list[dict[str, Any]]) -> list[tuple[str, Any]]:
    out: list[tuple[str, Any]] = []
    for m in messages:
        if m.get("method") == "notifications/message":
            out.append(("log", m["params"]["data"]))
        elif m.get("method") == "notifications/progress":
            out.append(("progress", m["params"]["progress"]))
    return out


def _text(messages: list[dict[str, Any]]) -> str:
    text: str = messages[-1]["result"]["content"][0]["text"]
    return text


async def test_a_call_suspends_at_each_request_and_resumes_on_the_other_instance(instances: Instances) -> None:
    session = await Session.start(instances, {"elicitation": {}, "sampling": {}})
    first = await session.call("survey")
    assert _notes(first) == [("log", "starting")]  # no progress token: progress is not sent
    [elicit] = _requests(first)
    assert elicit["method"] == "elicitation/create" and elicit["id"].startswith("srv.")
    assert len(elicit["id"]) > 40  # carries 128 random bits
    assert await session.answer(elicit, {"action": "accept", "content": {"name": "Ada"}}) == 202
    response, second = await session.resume()
    assert response.status_code == 200 and "retry: 50" in response.text
    assert _notes(second) == [("log", "elicitation: accept")]  # "starting" is not sent again
    [sample] = _requests(second)
    assert sample["method"] == "sampling/createMessage"
    assert (
        await session.answer(sample, {"role": "assistant", "content": {"type": "text", "text": "hi!"}, "model": "m"})
        == 202
    )
    _, third = await session.resume()
    assert _notes(third) == [] and _text(third) == "accept:Ada|hi!"
    # a late resumption from the last event gets the same answer again, not a re-run
    _, again = await session.resume()
    assert _text(again) == "accept:Ada|hi!"


async def test_every_response_starts_with_a_fresh_event_id_and_ends_with_one_and_retry(instances: Instances) -> None:
    session = await Session.start(instances, {"roots": {}})
    await session.call("roots")
    response = (
        await instances.send(
            "GET", None, session.headers(accept="text/event-stream", **{"last-event-id": session.last_event_id or ""})
        )
    )[0]
    lines = [line for line in response.text.splitlines() if line]
    assert lines[0].startswith("id: call~")  # the priming event comes first
    assert lines[-3].startswith("id: ") and lines[-2] == "retry: 50"  # no answer yet: resume later


async def test_a_decline_and_a_client_error_reach_the_handler(instances: Instances) -> None:
    session = await Session.start(instances, {"elicitation": {}, "sampling": {}})
    [elicit] = _requests(await session.call("survey"))
    await session.answer(elicit, {"action": "decline"})
    [sample] = _requests((await session.resume())[1])
    await session.answer(sample, {"role": "assistant", "content": {"type": "text", "text": "x"}, "model": "m"})
    assert _text((await session.resume())[1]) == "decline:None|x"

    [failing] = _requests(await session.call("careful_sample"))
    await session.answer(failing, error={"code": -1, "message": "User rejected sampling request"})
    assert _text((await session.resume())[1]) == "client error -1: User rejected sampling request"


async def test_answers_are_bound_to_the_session_that_was_asked(
    instances: Instances, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(suspended_calls, "ANSWER_WAIT_SECONDS", 0.3)
    alice = await Session.start(instances, {"roots": {}})
    mallory = await Session.start(instances, {"roots": {}})
    [ask] = _requests(await alice.call("roots"))
    assert await mallory.answer(ask, {"roots": [{"uri": "file:///evil"}]}) == 202  # accepted, stored nowhere
    response, messages = await alice.resume()
    assert messages == [] and "retry:" in response.text  # still waiting for alice's own answer
    await alice.answer(ask, {"roots": [{"uri": "file:///home/ada"}]})
    assert _text((await alice.resume())[1]) == "file:///home/ada"
    forged = {"id": ask["id"].rsplit(".", 1)[0] + ".forged"}
    assert await alice.answer(forged, {"roots": []}) == 202


async def test_requests_go_only_to_clients_that_declared_the_capability(instances: Instances) -> None:
    session = await Session.start(instances, {"elicitation": {}})
    messages = await session.call("careful_sample")
    assert _requests(messages) == []
    result = messages[-1]["result"]
    assert result["isError"] is True and "did not declare the 'sampling' capability" in result["content"][0]["text"]


async def test_a_json_only_client_gets_a_readable_tool_error(instances: Instances) -> None:
    session = await Session.start(instances, {"sampling": {}}, accept="application/json")
    result = (await session.call("careful_sample"))[-1]["result"]
    assert result["isError"] is True and "text/event-stream" in result["content"][0]["text"]


async def test_a_cancel_on_the_other_instance_stops_a_running_call_without_a_response(instances: Instances) -> None:
    session = await Session.start(instances, {})
    session.instances.turn = 0
    running = asyncio.ensure_future(session.call("until_cancelled", {"seconds": 10}))
    stream = CallStream(session.ids + 1).format()  # the id `call` is about to use

    async def marked() -> bool:  # a running call leaves its marker after its first second
        return await instances.stores.calls.get(session.session_id, stream, time.time()) is not None

    await until(marked, what="the running call's marker")
    assert await session.notify("notifications/cancelled", {"requestId": session.ids, "reason": "user"}) == 202
    started = asyncio.get_running_loop().time()
    messages = await asyncio.wait_for(running, 5)
    assert messages == []  # no response for a cancelled request
    assert asyncio.get_running_loop().time() - started < 2.5  # seen within the watcher's next reads


async def test_a_cancelled_suspended_call_never_answers(instances: Instances) -> None:
    session = await Session.start(instances, {"roots": {}})
    [ask] = _requests(await session.call("roots"))
    await session.notify("notifications/cancelled", {"requestId": session.ids})
    await session.answer(ask, {"roots": []})
    response, messages = await session.resume()
    assert response.status_code == 200 and messages == []


async def test_url_elicitation_carries_an_id_and_its_completion_is_announced(instances: Instances) -> None:
    session = await Session.start(instances, {"elicitation": {"url": {}}})
    [ask] = _requests(await session.call("link_account"))
    assert ask["params"]["mode"] == "url" and ask["params"]["url"] == "https://example.com/link"
    elicitation_id = ask["params"]["elicitationId"]
    await session.answer(ask, {"action": "accept"})
    _, messages = await session.resume()
    complete = [m for m in messages if m.get("method") == "notifications/elicitation/complete"]
    assert complete == [
        {"jsonrpc": "2.0", "method": "notifications/elicitation/complete", "params": {"elicitationId": elicitation_id}}
    ]
    assert _text(messages) == "link: accept"


async def test_a_url_elicitation_required_error_is_32042_with_the_elicitation(instances: Instances) -> None:
    session = await Session.start(instances, {"elicitation": {"url": {}}})
    error = (await session.call("needs_authorization"))[-1]["error"]
    assert error["code"] == -32042
    [elicitation] = error["data"]["elicitations"]
    assert elicitation["mode"] == "url" and elicitation["url"] == "https://example.com/authorize"
    assert elicitation["elicitationId"]


async def test_a_form_only_client_is_not_sent_a_url_elicitation(instances: Instances) -> None:
    session = await Session.start(instances, {"elicitation": {}})
    messages = await session.call("link_account")
    assert _requests(messages) == [] and messages[-1]["result"]["isError"] is True
