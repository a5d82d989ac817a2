"""The durable task backend's parts: execution names, settings, the HTTP function's cold path, the sweeper's
reconcile with an execution's status, the operations budget, and idempotent starts through the local runner
(the real boto3 `Invoke`, to the SDK testing package's runner behind the kit's front)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import boto3
import pytest

from lambda_mcp.config import ConfigError, Settings
from lambda_mcp.server.errors import ToolError
from lambda_mcp.tasks import InMemoryTaskStore, TaskRecord
from lambda_mcp.tasks.durable import DurableExecutor, execution_name
from lambda_mcp.tasks.execution import Outcome, TaskRun
from lambda_mcp.tasks.runtime import TaskRuntime

pytestmark = pytest.mark.anyio


def test_an_execution_name_is_a_keyed_hash_of_the_task_id_lambda_accepts() -> None:
    task_id = "fO3nK0KgQ3GDyZ-WMiijfAluJ6l60Qo0"
    name = execution_name(task_id)
    assert name == execution_name(task_id) and name != execution_name(task_id + "x")
    assert re.fullmatch(r"[a-zA-Z0-9_-]{1,64}", name) and task_id not in name


@pytest.mark.parametrize(
    ("env", "message"),
    [
        ({"LAMBDA_MCP_TASK_BACKEND": "durable"}, "needs LAMBDA_MCP_TASK_DURABLE_FUNCTION"),
        ({"LAMBDA_MCP_TASK_BACKEND": "step-functions"}, "must be sqs or durable"),
    ],
)
def test_a_durable_backend_without_its_function_or_an_unknown_backend_is_one_clear_error(
    env: dict[str, str], message: str
) -> None:
    with pytest.raises(ConfigError, match=message):
        Settings.from_env(env, default_auth="none")


def test_the_http_function_offers_durable_tasks_without_importing_the_sdk() -> None:
    probe = (
        "import sys, json; import lambda_mcp.entrypoints.http as h;"
        "print(json.dumps([type(h.kit.task_runtime.executor).__name__,"
        " [m for m in sys.modules if m.startswith('aws_durable_execution_sdk_python')]]))"
    )
    env = {
        "LAMBDA_MCP_APP": "tests/apps/checkpointed.py:app",
        "LAMBDA_MCP_AUTH": "none",
        "LAMBDA_MCP_TASK_BACKEND": "durable",
        "LAMBDA_MCP_TASK_DURABLE_FUNCTION": "arn:aws:lambda:us-east-1:123456789012:function:worker:live",
        "AWS_DEFAULT_REGION": "us-east-1",
        "PATH": "/usr/bin:/bin",
    }
    out = subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True, text=True, check=True)
    executor, loaded = json.loads(out.stdout.strip().splitlines()[-1])
    assert executor == "DurableExecutor" and loaded == []


class Statuses:
    """A durable executor whose executions have the statuses given (by task id); records what it was asked."""

    def __init__(self, statuses: dict[str, str | None]) -> None:
        self.statuses = statuses
        self.submitted: list[str] = []
        self.rung: list[str] = []

    async def submit(self, task_id: str) -> None:
        self.submitted.append(task_id)

    async def submit_later(self, task_id: str, delay: float) -> None:
        return None

    def cancel(self, task_id: str) -> None:
        return None

    async def status(self, record: TaskRecord) -> str | None:
        return self.statuses[record.task_id]

    async def resume(self, record: TaskRecord) -> None:
        self.rung.append(record.task_id)


async def _never(record: TaskRecord, run: TaskRun) -> Outcome:
    raise AssertionError("the sweeper never runs a durable task's tool")


async def _overdue(runtime: TaskRuntime, task_id: str, **changes: Any) -> TaskRecord:
    record = await runtime.create(
        task_id=task_id,
        owner="anonymous",
        method="tools/call",
        params={"name": "t", "arguments": {}},
        wire="modern",
        protocol_version="2026-07-28",
        client_capabilities={},
    )
    stored = await runtime.store.get(task_id, runtime.clock())
    assert stored is not None
    overdue = stored.replace(due_at=runtime.clock() - 1, **changes)
    await runtime.store.save(overdue)
    return record


async def test_the_sweeper_fails_tasks_whose_execution_ended_starts_lost_ones_and_rings_running_ones() -> None:
    executor = Statuses({"ended": "TIMED_OUT", "lost": None, "gone": "NOT_FOUND", "running": "RUNNING"})
    runtime = TaskRuntime(InMemoryTaskStore(), executor, _never)
    arn = "arn:aws:lambda:us-east-1:1:function:w:live/durable-execution/n/i"
    await _overdue(runtime, "ended", execution_arn=arn)
    await _overdue(runtime, "lost")
    await _overdue(runtime, "gone", execution_arn=arn)
    await _overdue(runtime, "running", execution_arn=arn, callback_id="cb")
    executor.submitted.clear()
    counts = await runtime.sweep(budget_seconds=5)
    records = {t: await runtime.store.get(t, runtime.clock()) for t in executor.statuses}
    assert records["ended"] is not None and records["ended"].status == "failed"
    assert "TIMED_OUT" in json.dumps(records["ended"].error)
    assert records["gone"] is not None and records["gone"].status == "failed"
    assert records["lost"] is not None and records["lost"].status == "working" and records["lost"].attempts == 1
    assert executor.submitted == ["lost"] and counts["failed"] == 2 and counts["requeued"] == 1
    running = records["running"]
    assert running is not None and running.status == "working" and running.due_at > runtime.clock()
    assert executor.rung == ["running"]


async def test_a_lost_start_fails_once_its_attempts_are_used() -> None:
    executor = Statuses({"lost": None})
    runtime = TaskRuntime(InMemoryTaskStore(), executor, _never, max_attempts=2)
    await _overdue(runtime, "lost", attempts=2)
    await runtime.sweep(budget_seconds=5)
    record = await runtime.store.get("lost", runtime.clock())
    assert record is not None and record.status == "failed" and "never started" in json.dumps(record.error)


def test_a_tool_past_the_operations_of_an_execution_fails_clearly() -> None:
    from lambda_mcp.tasks.durable_run import MAX_OPERATIONS, Budget

    budget = Budget(operations=MAX_OPERATIONS - 10)
    budget.spend(1)
    with pytest.raises(ToolError, match="3,000 durable operations"):
        budget.spend(5)
    with pytest.raises(ToolError, match="100 MB"):
        Budget().spend(0, 101 * 1_048_576)


@pytest.fixture
def local_runner(monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """The kit's local durable runner, its handler a durable function that parks on a callback."""
    from aws_durable_execution_sdk_python import DurableContext, durable_execution

    from lambda_mcp.local.durable import LocalDurable

    @durable_execution
    def parks(event: Any, context: DurableContext) -> Any:
        return context.create_callback(name="wait").result()

    local = LocalDurable(skip_time=True, execution_timeout_seconds=600).start()
    local._handler = parks
    monkeypatch.setenv("AWS_ENDPOINT_URL_LAMBDA", local.endpoint)
    yield local
    local.stop()


async def test_a_repeated_start_of_a_task_finds_its_one_execution(local_runner: Any) -> None:
    from lambda_mcp.local.durable import FUNCTION

    executor = DurableExecutor(FUNCTION)
    await executor.submit("task-one")
    await executor.submit("task-one")  # a create retried by its client, or a requeue by the sweeper
    await executor.submit("task-two")
    lam = boto3.client("lambda", endpoint_url=local_runner.endpoint)
    one = lam.list_durable_executions_by_function(
        FunctionName=FUNCTION, DurableExecutionName=execution_name("task-one")
    )
    assert len(one["DurableExecutions"]) == 1
    assert len(lam.list_durable_executions_by_function(FunctionName=FUNCTION)["DurableExecutions"]) == 2


def test_the_durable_worker_names_its_own_alias_when_the_template_cannot() -> None:
    """template.yaml cannot put the durable worker's own alias in its environment (a circular reference):
    the worker derives it, so its settings check passes; a value that is set wins."""
    from lambda_mcp.config import Settings
    from lambda_mcp.tasks.durable import name_own_alias

    env = {"AWS_LAMBDA_FUNCTION_NAME": "stack-DurableTaskWorker-abc", "LAMBDA_MCP_TASK_BACKEND": "durable"}
    name_own_alias(env)
    assert env["LAMBDA_MCP_TASK_DURABLE_FUNCTION"] == "stack-DurableTaskWorker-abc:live"
    assert Settings.from_env(env, default_auth="none").task_durable_function == "stack-DurableTaskWorker-abc:live"
    kept = {**env, "LAMBDA_MCP_TASK_DURABLE_FUNCTION": "arn:aws:lambda:us-east-1:1:function:f:live"}
    name_own_alias(kept)
    assert kept["LAMBDA_MCP_TASK_DURABLE_FUNCTION"].startswith("arn:")
