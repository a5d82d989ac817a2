"""Tasks that talk to their client across invocations, over real HTTP through `lambda-mcp dev --lambda`
(the buffered handler, the task queue and the real worker handler).

Waits are capped at 1 s, so `tasks/result` ends its response early and is resumed with `GET` +
`Last-Event-ID`: what the worker logged and the task's input requests arrive on those responses,
each once and with related-task metadata. Every server message is schema-checked.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.support.legacy_client import LegacyClient
from tests.support.polling import wait_until
from tests.support.processes import ServerProcess, lambda_mcp_dev, ran
from tests.support.recorder import Recorder

APP = "tests/apps/interaction.py"
RELATED = "io.modelcontextprotocol/related-task"
MODERN = "2026-07-28"
TASKS = "io.modelcontextprotocol/tasks"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    log = tmp_path_factory.mktemp("task-interaction") / "server.log"
    env = {"LAMBDA_MCP_MAX_WAIT_SECONDS": "1", "LAMBDA_MCP_RETRY_MS": "100"}
    process = lambda_mcp_dev(APP, through_lambda=True, log=log, env=env)
    yield process
    process.stop()


def _follow(client: LegacyClient, messages: list[dict[str, Any]], answer: Any = None) -> list[dict[str, Any]]:
    """Every message of a request until its response, resuming as often as the server ends early;
    `answer(request)` answers requests from the server (POSTed before resuming)."""
    seen = list(messages)
    for _ in range(80):
        if any("result" in m or "error" in m for m in messages):
            return seen
        assert "retry: " in client.last.text, client.last.text
        for request in [m for m in messages if "method" in m and "id" in m]:
            result = answer(request)
            assert client.send({"jsonrpc": "2.0", "id": request["id"], "result": result}) == []
            assert client.last.status_code == 202
        messages = client.resume()
        seen += messages
    raise AssertionError("no response after 80 resumptions")


def test_worker_logs_and_progress_reach_tasks_result_once_in_order(server: ServerProcess, recorder: Recorder) -> None:
    client = LegacyClient(server.url, recorder)
    meta = {"progressToken": "p-1"}
    created = client.call("tools/call", {"name": "chatty_job", "arguments": {"steps": 4}, "task": {}, "_meta": meta})
    task_id = created["result"]["task"]["taskId"]
    seen = _follow(client, client.post("tasks/result", {"taskId": task_id}))
    logs = [m["params"]["data"] for m in seen if m.get("method") == "notifications/message"]
    progress = [m["params"]["progress"] for m in seen if m.get("method") == "notifications/progress"]
    assert logs == ["step 1", "step 2", "step 3", "step 4"]
    assert progress == [1, 2, 3, 4]
    assert all(m["params"]["_meta"][RELATED] == {"taskId": task_id} for m in seen if "method" in m)
    assert seen[-1]["result"]["content"][0]["text"] == "done after 4 steps"
    assert len([m for m in seen if "result" in m]) == 1


def test_an_input_required_task_asks_on_the_tasks_result_stream_and_completes(
    server: ServerProcess, recorder: Recorder
) -> None:
    client = LegacyClient(server.url, recorder, capabilities={"elicitation": {}})
    task_id = client.call("tools/call", {"name": "approval_job", "arguments": {}, "task": {}})["result"]["task"][
        "taskId"
    ]
    asked: list[dict[str, Any]] = []

    def approve(request: dict[str, Any]) -> dict[str, Any]:
        asked.append(request)
        return {"action": "accept", "content": {"ok": True}}

    seen = _follow(client, client.post("tasks/result", {"taskId": task_id}), approve)
    [request] = asked  # asked once, although tasks/result was resumed several times
    assert request["method"] == "elicitation/create" and request["params"]["_meta"][RELATED] == {"taskId": task_id}
    assert request["id"].startswith(f"task.{task_id}.")
    logs = [m["params"]["data"] for m in seen if m.get("method") == "notifications/message"]
    assert logs == ["asking for approval", "answer: accept"]  # the re-run does not log "asking" again
    assert seen[-1]["result"]["content"][0]["text"] == "approved=True"
    assert client.call("tasks/get", {"taskId": task_id})["result"]["status"] == "completed"


def test_answers_for_someone_elses_task_are_ignored(server: ServerProcess, recorder: Recorder) -> None:
    alice = LegacyClient(server.url, recorder, capabilities={"elicitation": {}})
    mallory = LegacyClient(server.url, recorder, capabilities={"elicitation": {}})
    task_id = alice.call("tools/call", {"name": "approval_job", "arguments": {}, "task": {}})["result"]["task"][
        "taskId"
    ]
    wait_until(lambda: alice.call("tasks/get", {"taskId": task_id})["result"]["status"] == "input_required")
    forged = {"jsonrpc": "2.0", "id": f"task.{task_id}.YXBwcm92ZQ", "result": {"action": "accept", "content": {}}}
    mallory.send(forged)
    assert mallory.last.status_code == 202  # an answer is stored (or not) before the 202: nothing to wait for
    assert alice.call("tasks/get", {"taskId": task_id})["result"]["status"] == "input_required"


def test_a_legacy_cancel_stops_a_worker_task_and_the_cancelled_request_gets_no_response(
    server: ServerProcess, recorder: Recorder
) -> None:
    client = LegacyClient(server.url, recorder)
    created = client.call("tools/call", {"name": "until_cancelled", "arguments": {"seconds": 30}, "task": {}})
    created_by = client.last_request_id
    task_id = created["result"]["task"]["taskId"]
    waiting = client.post("tasks/result", {"taskId": task_id})
    assert waiting == [] and "retry: " in client.last.text  # still running: resume later
    result_request = client.last_request_id
    client.send({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": result_request}})
    assert client.resume() == [] and client.last.status_code == 200  # no response for the cancelled request

    client.send({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": created_by}})
    assert client.last.status_code == 202
    assert client.call("tasks/get", {"taskId": task_id})["result"]["status"] == "cancelled"
    # the worker either stops the run it started, or, when the cancel came first, never starts it
    stopped = ("cancelled", "skipped: cancelled", "skipped: changed while claiming")
    wait_until(lambda: ran(server, task_id, *stopped), what="the worker's run to stop as cancelled")
    assert not ran(server, task_id, "completed")
    assert client.call("tasks/get", {"taskId": task_id})["result"]["status"] == "cancelled"


def _modern(url: str, method: str, params: dict[str, Any], recorder: Recorder) -> dict[str, Any]:
    caps = {"elicitation": {}, "extensions": {TASKS: {}}}
    meta = {"io.modelcontextprotocol/protocolVersion": MODERN, "io.modelcontextprotocol/clientCapabilities": caps}
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": {**params, "_meta": meta}}).encode()
    headers = {
        "content-type": "application/json",
        "accept": "application/json, text/event-stream",
        "mcp-protocol-version": MODERN,
        "mcp-method": method,
    }
    name = params.get("name") or params.get("taskId")
    if isinstance(name, str):
        headers["mcp-name"] = name
    response = httpx.post(url, content=body, headers=headers, timeout=30)
    lowered = headers | {"host": response.request.headers["host"]}
    messages = recorder.exchange(lowered, body, response.status_code, dict(response.headers), response.content)
    result: dict[str, Any] = messages[-1]["result"]
    return result


def _status(url: str, task_id: str, recorder: Recorder, status: str) -> dict[str, Any] | None:
    task = _modern(url, "tasks/get", {"taskId": task_id}, recorder)
    return task if task["status"] == status else None


def test_tasks_update_resumes_a_parked_task_on_the_worker_to_completed(
    server: ServerProcess, recorder: Recorder
) -> None:
    created = _modern(server.url, "tools/call", {"name": "approval_job", "arguments": {}}, recorder)
    task_id = created["taskId"]
    task = wait_until(lambda: _status(server.url, task_id, recorder, "input_required"))
    assert list(task["inputRequests"]) == ["approve"]
    answers = {"approve": {"action": "accept", "content": {"ok": True}}, "unknown": {"action": "decline"}}
    _modern(server.url, "tasks/update", {"taskId": task_id, "inputResponses": answers}, recorder)
    task = wait_until(lambda: _status(server.url, task_id, recorder, "completed"))
    assert task["result"]["content"][0]["text"] == "approved=True"
