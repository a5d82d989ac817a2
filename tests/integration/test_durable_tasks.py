"""The durable backend through `lambda-mcp dev --lambda --task-backend durable`: tasks run as durable executions
on the durable execution SDK's local runner, through the real durable worker handler, with the state in
DynamoDB Local (so the test reads the task record the way the kit wrote it) and the kit's boto3 Lambda calls
going through the runner's API (`AWS_ENDPOINT_URL_LAMBDA`).

The task `step A -> sleep 2 h -> step B -> elicit -> step C` completes on both eras within a minute, each
step's function running once; a crash inside step B fails the task without running A again; a cancel of a
parked task stops its execution; the callback id never reaches a client or the log.
"""

from __future__ import annotations

import json
import re
import secrets
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import boto3
import pytest

from lambda_mcp.protocol.ids import TaskInputId
from lambda_mcp.storage.dynamodb.keys import task_pk
from lambda_mcp.tasks.durable import execution_name
from tests.integration.test_task_steps_local import GO, PROGRESS, SKIPPED, _counted, _modern
from tests.support.legacy_client import LegacyClient
from tests.support.polling import wait_until
from tests.support.processes import ServerProcess, lambda_mcp_dev
from tests.support.recorder import Recorder

pytestmark = pytest.mark.slow  # a dev server, DynamoDB Local and the local durable runner
TABLE = "lambda-mcp-durable-tests"


class Durable:
    """The dev server, where its counts go, and every answer it gave the test."""

    def __init__(self, process: ServerProcess, counts: Path, endpoint: str) -> None:
        self.process = process
        self.counts = counts
        self.endpoint = endpoint
        self.answers: list[str] = []

    def call(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        """One 2026 request (a client declaring elicitation and the tasks extension); its answer is kept."""
        result = _modern(self.process.url, method, params)
        self.answers.append(json.dumps(result))
        return result

    def status(self, task_id: str, status: str) -> dict[str, Any]:
        def reached() -> dict[str, Any] | None:
            task = self.call("tasks/get", {"taskId": task_id})
            return task if task["status"] == status else None

        found: dict[str, Any] = wait_until(reached, what=f"task {task_id} to be {status}", timeout=60)
        return found

    def record(self, task_id: str) -> dict[str, Any]:
        """The task's record as DynamoDB Local holds it."""
        table = boto3.resource("dynamodb", endpoint_url=self.endpoint).Table(TABLE)
        item = table.get_item(Key={"pk": task_pk(task_id), "sk": "TASK"}, ConsistentRead=True).get("Item")
        assert item is not None, f"no record of task {task_id}"
        found: dict[str, Any] = json.loads(str(item["body"]))
        return found

    def lam(self) -> Any:
        runner = re.search(r"local runner, (http://127\.0\.0\.1:\d+)", self.process.log_text())
        assert runner is not None, self.process.log_text()
        return boto3.client("lambda", endpoint_url=runner.group(1))


@pytest.fixture(scope="module")
def durable(tmp_path_factory: pytest.TempPathFactory, dynamodb_local_url: str) -> Iterator[Durable]:
    base = tmp_path_factory.mktemp("durable-dev")
    env = {"LAMBDA_MCP_TEST_COUNTS": str(base / "counts"), "LAMBDA_MCP_TABLE_NAME": TABLE}
    process = lambda_mcp_dev(
        "tests/apps/checkpointed.py",
        through_lambda=True,
        log=base / "dev.log",
        env=env,
        aws_endpoint=dynamodb_local_url,
        extra_args=["--task-backend", "durable", "--table", TABLE],
    )
    yield Durable(process, base / "counts", dynamodb_local_url)
    process.stop()


def test_the_2026_task_runs_each_step_once_through_a_two_hour_sleep_and_an_answer(durable: Durable) -> None:
    started = time.monotonic()
    label = secrets.token_hex(4)
    task_id = durable.call("tools/call", {"name": "pipeline", "arguments": {"label": label}})["taskId"]
    parked = durable.status(task_id, "input_required")
    assert list(parked["inputRequests"]) == ["go"]
    record = durable.record(task_id)
    callback, arn = record["callback_id"], record["execution_arn"]
    assert callback and arn and task_id not in arn
    named = durable.lam().get_durable_execution(DurableExecutionArn=arn)
    assert named["DurableExecutionName"] == execution_name(task_id) and named["Status"] == "RUNNING"
    durable.call("tasks/update", {"taskId": task_id, "inputResponses": {"go": GO}})
    done = durable.status(task_id, "completed")
    assert done["result"]["content"][0]["text"] == "a B[1, 2] c=True"
    assert time.monotonic() - started < 60
    counted = _counted(durable.counts, label)
    assert (counted["A"], counted["B"], counted["C"]) == (1, 1, 1)
    assert SKIPPED in durable.process.log_text()
    assert all(callback not in answer for answer in durable.answers)
    assert callback not in durable.process.log_text()
    lam = durable.lam()  # the execution ran to its end
    wait_until(lambda: lam.get_durable_execution(DurableExecutionArn=arn)["Status"] == "SUCCEEDED")


def test_the_legacy_task_completes_through_tasks_result_with_its_progress_once(
    durable: Durable, recorder: Recorder
) -> None:
    label = secrets.token_hex(4)
    client = LegacyClient(durable.process.url, recorder, capabilities={"elicitation": {}})
    params = {"name": "pipeline", "arguments": {"label": label}, "task": {}, "_meta": {"progressToken": "p"}}
    task_id = client.call("tools/call", params)["result"]["task"]["taskId"]
    wait_until(lambda: client.call("tasks/get", {"taskId": task_id})["result"]["status"] == "input_required")
    callback = durable.record(task_id)["callback_id"]
    client.send({"jsonrpc": "2.0", "id": TaskInputId(task_id, "go").format(), "result": GO})
    wait_until(lambda: client.call("tasks/get", {"taskId": task_id})["result"]["status"] == "completed", timeout=60)
    seen = client.post("tasks/result", {"taskId": task_id})
    progress = [m["params"] for m in seen if m.get("method") == "notifications/progress"]
    assert [(p["progress"], p["total"], p["message"]) for p in progress] == PROGRESS
    assert seen[-1]["result"]["content"][0]["text"] == "a B[1, 2] c=True"
    counted = _counted(durable.counts, label)
    assert (counted["A"], counted["B"], counted["C"]) == (1, 1, 1)
    assert callback and callback not in json.dumps(seen) and callback not in durable.process.log_text()


def test_a_crash_inside_step_b_fails_the_task_without_running_a_again(durable: Durable) -> None:
    label = secrets.token_hex(4)
    task_id = durable.call("tools/call", {"name": "crash_in_b", "arguments": {"label": label}})["taskId"]
    failed = durable.status(task_id, "failed")
    assert "B" in json.dumps(failed)
    counted = _counted(durable.counts, label)
    assert (counted["A"], counted["B"]) == (1, 1), counted  # B started once and was never run again


def test_cancelling_a_parked_task_cancels_it_and_stops_its_execution(durable: Durable) -> None:
    label = secrets.token_hex(4)
    task_id = durable.call("tools/call", {"name": "pipeline", "arguments": {"label": label}})["taskId"]
    durable.status(task_id, "input_required")
    arn = durable.record(task_id)["execution_arn"]
    durable.call("tasks/cancel", {"taskId": task_id})
    lam = durable.lam()
    wait_until(lambda: lam.get_durable_execution(DurableExecutionArn=arn)["Status"] == "STOPPED")
    assert durable.call("tasks/get", {"taskId": task_id})["status"] == "cancelled"
    assert "C" not in _counted(durable.counts, label)
