"""Change notifications across instances: two `dev --lambda` processes on one DynamoDB Local table and one
moto server SQS queue, behind a front door that sends each request to the other process.

A resource update published by a task on the worker lands in the change feed in the table; the
subscribed session's legacy GET stream (polled: each response ends with an id and `retry:`) picks
it up on whichever instance serves the next poll.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest

from lambda_mcp.config import Settings
from lambda_mcp.kit import build_kit
from lambda_mcp.loader import load_app
from tests.support.front_door import LambdaPair
from tests.support.legacy_client import LegacyClient
from tests.support.polling import wait_until
from tests.support.processes import ROOT
from tests.support.recorder import Recorder

APP = "tests/apps/interaction.py"
COUNTER = "test://counter"


@pytest.fixture(scope="module")
def pair(
    tmp_path_factory: pytest.TempPathFactory, dynamodb_local_url: str, moto_server_url: str
) -> Iterator[LambdaPair]:
    work = tmp_path_factory.mktemp("changes-pair")
    violations = work / "violations.txt"
    violations.touch()
    env = {"LAMBDA_MCP_GET_STREAM_SECONDS": "1", "LAMBDA_MCP_RETRY_MS": "100"}
    lambdas = LambdaPair(APP, work, dynamodb_local_url, moto_server_url, violations, env)
    yield lambdas
    lambdas.stop()
    assert violations.read_text() == ""


def _poll(client: LegacyClient, last_event_id: str | None) -> tuple[list[dict[str, Any]], str]:
    """One poll of the session's GET stream: its messages and the id the next poll resumes from."""
    headers = {**client.headers(), "accept": "text/event-stream"}
    if last_event_id:
        headers["last-event-id"] = last_event_id
    response = client.http.get(client.url, headers=headers)
    assert response.status_code == 200 and "retry: 100" in response.text, (response.status_code, response.text)
    lines = response.text.splitlines()
    ids = [line[4:] for line in lines if line.startswith("id: ")]
    assert lines[0].startswith("id: changes~")  # every response opens with an id'd event
    messages = client.recorder.exchange(
        {k.lower(): v for k, v in headers.items()} | {"host": "127.0.0.1"},
        b"",
        response.status_code,
        dict(response.headers),
        response.content,
    )
    return messages, ids[-1]


def _wait_completed(client: LegacyClient, task_id: str) -> None:
    status = lambda: client.call("tasks/get", {"taskId": task_id})["result"]["status"] == "completed"  # noqa: E731
    wait_until(status, what=f"task {task_id} to complete")


def test_a_resource_update_from_the_worker_reaches_a_subscribed_client_on_another_instance(
    pair: LambdaPair,
) -> None:
    recorder = Recorder()
    watcher = LegacyClient(pair.url, recorder)
    bystander = LegacyClient(pair.url, recorder)
    assert watcher.call("resources/subscribe", {"uri": COUNTER})["result"] == {}
    quiet, cursor = _poll(watcher, None)  # nothing changed yet: the poll ends after its hold
    assert quiet == []
    _, bystander_cursor = _poll(bystander, None)

    created = watcher.call("tools/call", {"name": "bump_later", "arguments": {}, "task": {}})
    _wait_completed(watcher, created["result"]["task"]["taskId"])

    served_by = len(pair.door.hits)
    updates, _ = _poll(watcher, cursor)
    assert pair.door.hits[served_by] != pair.door.hits[served_by - 1]  # another instance than the last request
    assert {"jsonrpc": "2.0", "method": "notifications/resources/updated", "params": {"uri": COUNTER}} in updates
    not_subscribed, _ = _poll(bystander, bystander_cursor)
    assert [m for m in not_subscribed if m.get("method") == "notifications/resources/updated"] == []
    assert recorder.violations == []


def test_list_changes_reach_every_session_polling_the_get_stream(pair: LambdaPair) -> None:
    recorder = Recorder()
    client = LegacyClient(pair.url, recorder)
    _, cursor = _poll(client, None)
    other = LegacyClient(pair.url, recorder)
    assert other.call("tools/call", {"name": "announce_tools", "arguments": {}})["result"]["content"][0]["text"]
    updates, _ = _poll(client, cursor)
    assert updates == [{"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}]
    assert recorder.violations == []


def test_the_get_stream_is_405_when_the_deployment_turns_it_off(tmp_path: Path) -> None:
    app = load_app(str(ROOT / APP))
    kit = build_kit(app, Settings(state_key=b"k", get_stream=False), streaming=False, local=True)
    transport = httpx.ASGITransport(app=kit.asgi())

    async def run() -> int:
        async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1:8000") as http:
            params = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}
            started = await http.post(
                "/mcp",
                json={"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": params},
                headers={"accept": "application/json, text/event-stream"},
            )
            headers = {"mcp-session-id": started.headers["mcp-session-id"], "accept": "text/event-stream"}
            return (await http.get("/mcp", headers=headers)).status_code

    assert anyio.run(run) == 405
