"""The task worker Lambda handler: SQS task messages, dead letters and the scheduled sweeper.

Deployed as `lambda_mcp.entrypoints.worker.handler` with the same `LAMBDA_MCP_*` settings as the
HTTP function plus `LAMBDA_MCP_TASK_DLQ_ARN` (see template.yaml).
"""

from __future__ import annotations

from typing import Any

from ..worker import handle_event
from ._kit import lambda_kit, lambda_observer, register_snapstart_hooks
from ._loop import start_lifespan

register_snapstart_hooks(__name__)  # SnapStart's runtime hooks (its clients built before the snapshot; no priming)
kit = lambda_kit()
if kit.task_runtime is None:
    raise RuntimeError("the task worker needs LAMBDA_MCP_TASK_QUEUE_URL (and LAMBDA_MCP_TABLE_NAME) to be set")
_runtime = kit.task_runtime
_observer = lambda_observer()
start_lifespan(kit.app.lifespans)


def handler(event: dict[str, Any], context: Any) -> Any:
    """Each task run: one JSON log line, under the correlation id of the request that queued it."""
    return handle_event(
        _runtime, event, context, kit.settings.task_dead_letter_arn, kit.stores.changes, report=_observer
    )
