"""2025-11-25 core tasks end to end over real HTTP, through `lambda-mcp dev --lambda`: the buffered
Lambda handler, the task queue and the real worker handler.

Waits are capped at 1 s (LAMBDA_MCP_MAX_WAIT_SECONDS) so a `tasks/result` for a longer task must end
its response early and be resumed with `GET` + `Last-Event-ID`. Every server message is checked
against the 2025-11-25 schema.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.legacy_client import LegacyClient
from tests.support.polling import wait_until
from tests.support.processes import ServerProcess, lambda_mcp_dev, ran
from tests.support.recorder import Recorder

APP = "examples/conformance/server.py"
RELATED = "io.modelcontextprotocol/related-task"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    log = tmp_path_factory.mktemp("legacy-tasks") / "server.log"
    process = lambda_mcp_dev(
        APP, through_lambda=True, log=log, env={"LAMBDA_MCP_MAX_WAIT_SECONDS": "1", "LAMBDA_MCP_RETRY_MS": "100"}
    )
    yield process
    process.stop()


def _wait_for(client: LegacyClient, task_id: str, statuses: set[str]) -> dict[str, Any]:
    def reached() -> dict[str, Any] | None:
        task: dict[str, Any] = client.call("tasks/get", {"taskId": task_id})["result"]
        return task if task["status"] in statuses else None

    return wait_until(reached, what=f"task {task_id} to reach {statuses}")


def test_the_capability_is_advertised_to_2025_11_25_sessions_only(server: ServerProcess, recorder: Recorder) -> None:
    current = LegacyClient(server.url, recorder)
    assert current.capabilities["tasks"] == {"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}}
    older = LegacyClient(server.url, recorder, version="2025-06-18")
    assert "tasks" not in older.capabilities
    # where the capability was not advertised, `task` is ignored: the call runs and answers inline
    inline = older.call("tools/call", {"name": "slow_compute", "arguments": {"seconds": 0}, "task": {}})
    assert inline["result"]["content"][0]["text"] == "computed result in 0s"
    assert older.call("tasks/get", {"taskId": "anything"})["error"]["code"] == -32601


def test_task_support_is_enforced_with_method_not_found(server: ServerProcess, recorder: Recorder) -> None:
    client = LegacyClient(server.url, recorder)
    forbidden = client.call("tools/call", {"name": "greet", "arguments": {"name": "a"}, "task": {}})
    assert forbidden["error"]["code"] == -32601
    required = client.call("tools/call", {"name": "failing_job", "arguments": {}})
    assert required["error"]["code"] == -32601
    optional_inline = client.call("tools/call", {"name": "slow_compute", "arguments": {"seconds": 0}})
    assert "content" in optional_inline["result"]  # optional without `task`: a plain call


def test_an_augmented_call_is_a_durable_task_listed_only_for_its_owner(
    server: ServerProcess, recorder: Recorder
) -> None:
    alice, bob = LegacyClient(server.url, recorder), LegacyClient(server.url, recorder)
    created = alice.call(
        "tools/call", {"name": "slow_compute", "arguments": {"seconds": 1, "label": "a"}, "task": {"ttl": 7200000}}
    )["result"]
    task = created["task"]  # 2 h: above the floor of a task's last chance (docs/decisions.md, "Tasks")
    assert task["status"] == "working" and task["ttl"] == 7200000 and task["pollInterval"] > 0
    got = alice.call("tasks/get", {"taskId": task["taskId"]})["result"]
    assert got["taskId"] == task["taskId"] and got["createdAt"] == task["createdAt"]
    assert task["taskId"] in [t["taskId"] for t in alice.call("tasks/list")["result"]["tasks"]]
    assert bob.call("tasks/list")["result"]["tasks"] == []
    assert bob.call("tasks/get", {"taskId": task["taskId"]})["error"]["code"] == -32602
    assert bob.call("tasks/cancel", {"taskId": task["taskId"]})["error"]["code"] == -32602
    assert alice.call("tasks/list", {"cursor": "not-a-cursor"})["error"]["code"] == -32602
    assert _wait_for(alice, task["taskId"], {"completed"})["status"] == "completed"


def test_tasks_list_pages(server: ServerProcess, recorder: Recorder) -> None:
    client = LegacyClient(server.url, recorder)
    made = [
        client.call("tools/call", {"name": "slow_compute", "arguments": {"seconds": 0}, "task": {}})["result"]["task"]
        for _ in range(7)
    ]
    seen: list[str] = []
    cursor: str | None = None
    for _ in range(10):
        page = client.call("tasks/list", {"cursor": cursor} if cursor else {})["result"]
        seen += [t["taskId"] for t in page["tasks"]]
        cursor = page.get("nextCursor")
        if cursor is None:
            break
    assert seen == [t["taskId"] for t in made]


def test_tasks_result_blocks_across_responses_then_returns_the_result(
    server: ServerProcess, recorder: Recorder
) -> None:
    client = LegacyClient(server.url, recorder)
    task = client.call(
        "tools/call", {"name": "slow_compute", "arguments": {"seconds": 3, "label": "long"}, "task": {}}
    )["result"]["task"]
    started = time.monotonic()
    first = client.post("tasks/result", {"taskId": task["taskId"]})
    # the wait is capped at 1 s: the response ends with a priming event id and retry, no answer
    assert [m for m in first if "result" in m or "error" in m] == []
    assert client.last.headers["content-type"].startswith("text/event-stream")
    assert "retry: 100" in client.last.text and client.last_event_id
    resumptions = 0
    messages = first
    while not [m for m in messages if "result" in m]:
        messages = client.resume()
        resumptions += 1
        assert resumptions < 20 and client.last.status_code == 200
    result = messages[-1]["result"]
    assert result["content"][0]["text"] == "computed long in 3s"
    assert result["_meta"][RELATED] == {"taskId": task["taskId"]}
    assert resumptions >= 1 and time.monotonic() - started >= 2
    # a finished task answers at once, and the same way
    again = client.call("tasks/result", {"taskId": task["taskId"]})["result"]
    assert again["content"] == result["content"]


def test_tasks_result_returns_the_same_json_rpc_error_and_tool_errors_fail_the_task(
    server: ServerProcess, recorder: Recorder
) -> None:
    client = LegacyClient(server.url, recorder)
    broken = client.call("tools/call", {"name": "protocol_error_job", "arguments": {}, "task": {}})["result"]["task"]
    error = client.call("tasks/result", {"taskId": broken["taskId"]})["error"]
    assert error == {"code": -32603, "message": "the job hit an internal error"}
    assert client.call("tasks/get", {"taskId": broken["taskId"]})["result"]["status"] == "failed"

    tool_error = client.call("tools/call", {"name": "failing_job", "arguments": {}, "task": {}})["result"]["task"]
    result = client.call("tasks/result", {"taskId": tool_error["taskId"]})["result"]
    assert result["isError"] is True and "the job failed" in result["content"][0]["text"]
    assert client.call("tasks/get", {"taskId": tool_error["taskId"]})["result"]["status"] == "failed"


def test_cancel_sets_cancelled_before_answering_and_a_final_task_cannot_be_cancelled(
    server: ServerProcess, recorder: Recorder
) -> None:
    client = LegacyClient(server.url, recorder)
    task = client.call("tools/call", {"name": "slow_compute", "arguments": {"seconds": 5}, "task": {}})["result"]
    task_id = task["task"]["taskId"]
    cancelled = client.call("tasks/cancel", {"taskId": task_id})["result"]
    assert cancelled["status"] == "cancelled"
    assert client.call("tasks/get", {"taskId": task_id})["result"]["status"] == "cancelled"
    assert client.call("tasks/cancel", {"taskId": task_id})["error"]["code"] == -32602
    assert client.call("tasks/result", {"taskId": task_id})["error"]["message"] == "Task was cancelled"
    # the worker either stops the run it started, or, when the cancel came first, never starts it
    stopped = ("cancelled", "skipped: cancelled", "skipped: changed while claiming")
    wait_until(lambda: ran(server, task_id, *stopped), what="the worker's run to stop as cancelled")
    assert not ran(server, task_id, "completed")
    assert client.call("tasks/get", {"taskId": task_id})["result"]["status"] == "cancelled"


def test_a_json_only_client_is_told_to_ask_again(server: ServerProcess, recorder: Recorder) -> None:
    client = LegacyClient(server.url, recorder)
    task = client.call("tools/call", {"name": "slow_compute", "arguments": {"seconds": 2}, "task": {}})["result"]
    body = json.dumps(
        {"jsonrpc": "2.0", "id": 99, "method": "tasks/result", "params": {"taskId": task["task"]["taskId"]}}
    )
    headers = {**client.headers(), "accept": "application/json"}
    answer = client.http.post(server.url, content=body, headers=headers).json()
    assert answer["error"]["code"] == -32603 and "still running" in answer["error"]["message"]


def test_an_unknown_last_event_id_is_404(server: ServerProcess, recorder: Recorder, tmp_path: Path) -> None:
    client = LegacyClient(server.url, recorder)
    client.last_event_id = "taskresult~nope~MQ.1.abcd"
    client.resume()
    assert client.last.status_code == 404


def test_the_streaming_dev_server_runs_legacy_tasks_in_process(tmp_path: Path, recorder: Recorder) -> None:
    process = lambda_mcp_dev(APP, through_lambda=False, log=tmp_path / "dev.log")
    try:
        client = LegacyClient(process.url, recorder)
        task = client.call("tools/call", {"name": "slow_compute", "arguments": {"seconds": 1}, "task": {}})["result"]
        result = client.call("tasks/result", {"taskId": task["task"]["taskId"]})["result"]  # one blocking response
        assert result["content"][0]["text"] == "computed result in 1s"
        assert result["_meta"][RELATED] == {"taskId": task["task"]["taskId"]}
    finally:
        process.stop()


def test_a_wait_started_on_one_instance_resumes_on_another(
    dynamodb_local_url: str, tmp_path: Path, recorder: Recorder
) -> None:
    """Two handler processes share the table (DynamoDB Local): the task runs behind the first, its
    `tasks/result` starts there, ends early, and the `GET` with `Last-Event-ID` is served by the second."""
    env = {"LAMBDA_MCP_MAX_WAIT_SECONDS": "1", "LAMBDA_MCP_RETRY_MS": "100", "LAMBDA_MCP_TABLE_NAME": "two-instances"}
    first = lambda_mcp_dev(APP, through_lambda=True, aws_endpoint=dynamodb_local_url, env=env, log=tmp_path / "1.log")
    second = lambda_mcp_dev(APP, through_lambda=True, aws_endpoint=dynamodb_local_url, env=env, log=tmp_path / "2.log")
    try:
        client = LegacyClient(first.url, recorder)
        task = client.call("tools/call", {"name": "slow_compute", "arguments": {"seconds": 2}, "task": {}})["result"]
        messages = client.post("tasks/result", {"taskId": task["task"]["taskId"]})
        assert not [m for m in messages if "result" in m] and "retry: " in client.last.text
        client.url = second.url
        for _ in range(20):
            messages = client.resume()
            assert client.last.status_code == 200, client.last.text
            if [m for m in messages if "result" in m]:
                break
        assert messages[-1]["result"]["content"][0]["text"] == "computed result in 2s"
    finally:
        first.stop()
        second.stop()
