"""`DurableExecutor`: run each task as a Lambda durable execution of the durable task worker (the template's
`TaskBackend=durable`), through Lambda's API only; the worker's side is tasks/durable_run.py.

- A task starts with an asynchronous `Invoke` of the worker's alias, named for the task
  (`DurableExecutionName`): Lambda starts one execution per name, so a create retried by its client, or
  requeued by the sweeper, never starts a second one. The name is a keyed hash of the task id, never the id
  itself: execution names appear in ARNs, CloudTrail and listings, and a task id is its owner's handle.
- Answers resume a parked task by completing its callback (`resume`): the callback is a doorbell, the
  answers stay in the task record. A duplicate (a client's retried answer) is refused by Lambda: done.
- `tasks/cancel` writes `cancelled` as on every backend, then stops the execution (`stop`), best effort.
- The sweeper reconciles an overdue durable task with its execution (`reconcile`, `GetDurableExecution`).

Client polling never calls these APIs: `tasks/get`, `tasks/result` and `tasks/list` read the task record.
This module imports botocore only when a task is created, answered, cancelled or swept, and never the
durable execution SDK (the HTTP function's cold path).
"""

from __future__ import annotations

import functools
import hashlib
import hmac
import json
import logging
from collections.abc import MutableMapping
from typing import Any

from ..storage.aws_clients import in_thread
from .model import TaskRecord

logger = logging.getLogger("lambda_mcp")
NAME_KEY = b"lambda-mcp durable execution name v1"
"""The key of the execution name's HMAC. It need not be secret: a task id holds 128 random bits, so its
hash reveals nothing, and a fixed key keeps a task's name the same across deployments and key rotations
(a requeue after a rotation must not start a second execution)."""
MAX_PAYLOAD_BYTES = 1_048_576
"""Lambda's limit on an asynchronous invocation's payload (the kit's is `{"taskId": ...}`)."""
ENDED = frozenset({"FAILED", "TIMED_OUT", "STOPPED", "SUCCEEDED", "NOT_FOUND"})
"""Execution statuses after which nothing more runs (SUCCEEDED included: a task it left unfinished is lost;
NOT_FOUND: deleted after its retention)."""


def execution_name(task_id: str) -> str:
    """The durable execution name of a task: `task-` and 40 hex digits of an HMAC-SHA-256 of its id (Lambda
    allows 64 characters of `[a-zA-Z0-9-_]`)."""
    return "task-" + hmac.new(NAME_KEY, task_id.encode(), hashlib.sha256).hexdigest()[:40]


def payload(task_id: str) -> bytes:
    """The execution's input: the task id and the id of the request that created it (for the worker's logs)."""
    from ..observe.invocation import correlation_id

    body = json.dumps({"taskId": task_id, "correlationId": correlation_id()}, separators=(",", ":")).encode()
    if len(body) > MAX_PAYLOAD_BYTES:  # a task id is short: a guard for the limit, stated where it applies
        raise ValueError(f"a durable task's start payload is {len(body)} bytes; Lambda takes at most 1 MB")
    return body


def default_client() -> Any:
    """A Lambda client (endpoint from the environment, `AWS_ENDPOINT_URL_LAMBDA` locally), standard retries."""
    from ..storage.aws_clients import client  # only when a task is started or signalled: not the cold path

    return client("lambda", retries={"mode": "standard", "max_attempts": 5})


def _error_code(exc: Exception) -> str:
    response = getattr(exc, "response", None)
    return str(response.get("Error", {}).get("Code", "")) if isinstance(response, dict) else ""


class DurableExecutor:
    """Starts, resumes, stops and looks up the durable executions of tasks on the worker's alias `function`."""

    def __init__(self, function: str, client: Any | None = None) -> None:
        self.function = function
        self._client = client

    def _lambda(self) -> Any:
        if self._client is None:
            self._client = default_client()
        return self._client

    def prepare(self) -> None:
        """Build the client now rather than for the first task (SnapStart: before the snapshot)."""
        self._lambda()

    async def _call(self, method: str, **params: Any) -> Any:
        return await in_thread(functools.partial(getattr(self._lambda(), method), **params))

    async def submit(self, task_id: str) -> None:
        """Start the task's execution, or find it started: the same name and payload give the same execution."""
        try:
            await self._call(
                "invoke",
                FunctionName=self.function,
                InvocationType="Event",
                DurableExecutionName=execution_name(task_id),
                Payload=payload(task_id),
            )
        except Exception as exc:
            if _error_code(exc) != "DurableExecutionAlreadyStartedException":
                raise
            logger.info("task %s: its durable execution had started already", task_id)

    async def submit_later(self, task_id: str, delay: float) -> None:
        """Nothing to do: a durable task's sleep is a durable wait, which wakes the execution itself."""

    def cancel(self, task_id: str) -> None:
        """Nothing to do here: `stop` stops the execution once the cancel is written."""

    async def resume(self, record: TaskRecord) -> None:
        """Ring the doorbell of a task its answers resumed: complete its callback. One that is gone already (a
        repeated answer, or the execution ended) is done; anything else raises (the runtime marks the task
        due, and the sweeper's reconcile rings again)."""
        if record.callback_id is None:  # parked without a callback: cannot happen; the sweeper looks at it
            raise RuntimeError(f"task {record.task_id} has no durable callback to resume")
        try:
            await self._call("send_durable_execution_callback_success", CallbackId=record.callback_id, Result=b"{}")
        except Exception as exc:
            if _error_code(exc) not in ("ResourceNotFoundException", "CallbackTimeoutException"):
                raise
            logger.info("task %s: its callback was completed already or is gone", record.task_id)

    async def stop(self, record: TaskRecord) -> None:
        """Stop a cancelled task's execution, best effort: DynamoDB decided the cancel, and a parked execution
        that stays ends when its callback times out with the task."""
        if record.execution_arn is None:  # not started yet: its first run finds the task cancelled
            return
        try:
            await self._call(
                "stop_durable_execution",
                DurableExecutionArn=record.execution_arn,
                Error={"ErrorType": "TaskCancelled", "ErrorMessage": "the task was cancelled"},
            )
        except Exception:
            logger.warning("task %s: could not stop its durable execution", record.task_id, exc_info=True)

    async def status(self, record: TaskRecord) -> str | None:
        """The status of the task's execution (`RUNNING`, `SUCCEEDED`, `FAILED`, ..., `NOT_FOUND`); None when
        no run has started (its start was lost, or its first invocation has not come yet)."""
        if record.execution_arn is None:
            return None
        try:
            found = await self._call("get_durable_execution", DurableExecutionArn=record.execution_arn)
        except Exception as exc:
            if _error_code(exc) == "ResourceNotFoundException":
                return "NOT_FOUND"
            raise
        return str(found.get("Status") or "") or None


ALIAS = "live"
"""The durable worker's alias (template.yaml: `AutoPublishAlias: live`); executions start on it."""


def name_own_alias(environ: MutableMapping[str, str]) -> None:
    """In the durable worker: `LAMBDA_MCP_TASK_DURABLE_FUNCTION` defaults to the function's own alias,
    `<its name>:live` (a function cannot name its own alias in its environment: a circular reference)."""
    name = environ.get("AWS_LAMBDA_FUNCTION_NAME")
    if name and not environ.get("LAMBDA_MCP_TASK_DURABLE_FUNCTION"):
        environ["LAMBDA_MCP_TASK_DURABLE_FUNCTION"] = f"{name}:{ALIAS}"
