"""The durable task worker Lambda handler (`TaskBackend=durable`): each invocation replays one task's
durable execution (tasks/durable_run.py).

Deployed as `lambda_mcp.entrypoints.durable_worker.handler` on a function created with `DurableConfig`, with
the same `LAMBDA_MCP_*` settings as the HTTP function and the durable execution SDK in its layer. Only this
entrypoint imports the SDK.
"""

from __future__ import annotations

import os
from typing import Any

from aws_durable_execution_sdk_python import DurableContext, durable_execution
from aws_durable_execution_sdk_python.exceptions import SuspendExecution

from ..observe.invocation import invocation, note
from ..server.changes import publishing_to
from ..tasks.durable import name_own_alias
from ..tasks.durable_run import execute, task_id_of
from ._kit import lambda_kit, lambda_observer, register_snapstart_hooks
from ._loop import start_lifespan

register_snapstart_hooks(__name__)  # SnapStart's runtime hooks, as in the task worker
name_own_alias(os.environ)  # template.yaml cannot set it: the alias is the function's own
kit = lambda_kit()
if kit.task_runtime is None or kit.settings.task_backend != "durable":
    raise RuntimeError(
        "the durable task worker needs LAMBDA_MCP_TASK_BACKEND=durable, LAMBDA_MCP_TASK_DURABLE_FUNCTION and"
        " LAMBDA_MCP_TABLE_NAME to be set (template.yaml's TaskBackend=durable sets them)"
    )
_runtime = kit.task_runtime
_observer = lambda_observer()
start_lifespan(kit.app.lifespans)


@durable_execution
def handler(event: Any, context: DurableContext) -> dict[str, Any]:
    """One invocation of a task's execution: one JSON log line (`outcome`: the task's status when the
    execution ends here, else `suspended`)."""
    correlation = event.get("correlationId") if isinstance(event, dict) else None
    with publishing_to(kit.stores.changes), invocation(correlation, cold_start=_observer.take_cold_start()) as record:
        note(task_id=task_id_of(event))
        outcome = "failed: invocation"
        try:
            ended = execute(_runtime, event, context)
            outcome = str(ended["status"])
            return ended
        except SuspendExecution:
            outcome = "suspended"
            raise
        finally:
            _observer.write(record, "durable task run", outcome=outcome)
