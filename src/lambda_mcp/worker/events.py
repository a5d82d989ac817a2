"""Route one worker Lambda event: task messages (SQS batch with partial failures), dead letters, sweeps.

Task messages are processed with Powertools' `AsyncBatchProcessor`, so the records of a batch run
concurrently and only the ones that raised are reported in `batchItemFailures` (the event source
mapping deletes the rest). A record raises only when storage fails; a tool's own failure is a
`failed` task, not a retry.
"""

from __future__ import annotations

import logging
import secrets
from typing import Any, Protocol

from ..observe.invocation import Invocation, invocation, note
from ..runloop import run
from ..server.changes import publishing_to
from ..storage.ports import ChangeLog
from ..tasks.runtime import TaskRuntime
from ..tasks.sqs import CORRELATION_ATTRIBUTE, task_id_of

logger = logging.getLogger("lambda_mcp")
SWEEP_MARGIN_SECONDS = 30.0
"""A sweep stops this long before its invocation would time out (the next scheduled run goes on)."""
LEASE_MARGIN = 0.1
"""A lease outlives the invocation's remaining time by this fraction (at most 5 s), so no other
worker claims the task while this invocation could still be running it."""


def is_scheduled(event: dict[str, Any]) -> bool:
    return event.get("source") == "aws.events" and event.get("detail-type") == "Scheduled Event"


class Report(Protocol):
    """Where each task run's log line and metrics go (`observe.powertools.Observer` in Lambda)."""

    def take_cold_start(self) -> bool: ...

    def write(self, record: Invocation, message: str, **fields: Any) -> None: ...


def handle_event(
    runtime: TaskRuntime,
    event: dict[str, Any],
    context: Any,
    dead_letter_arn: str | None,
    changes: ChangeLog,
    report: Report | None = None,
) -> Any:
    """The worker's whole job for one invocation; returns the Lambda response. Changes the tools publish
    go to `changes` (the change log every instance polls); each task run (and a sweep) is reported to
    `report`, under the correlation id of the request that queued the task."""
    with publishing_to(changes):
        return _handle(runtime, event, context, dead_letter_arn, report)


def _handle(
    runtime: TaskRuntime, event: dict[str, Any], context: Any, dead_letter_arn: str | None, report: Report | None
) -> Any:
    cold = report.take_cold_start() if report is not None else False
    if is_scheduled(event):
        with invocation(getattr(context, "aws_request_id", None), cold_start=cold) as sweep:
            remaining = context.get_remaining_time_in_millis() / 1000 if context is not None else 60.0
            budget = max(1.0, min(remaining - SWEEP_MARGIN_SECONDS, runtime.sweep_seconds))
            counts = run(runtime.sweep(budget_seconds=budget))  # the thread's loop: lifespan resources live there
            if report is not None:
                report.write(sweep, "sweep", **counts)
        return counts
    records = event.get("Records")
    if not isinstance(records, list):
        raise ValueError("the task worker handles SQS events and scheduled sweeps only")
    from aws_lambda_powertools.utilities.batch import (  # 150 ms: only on the worker, never the HTTP path
        AsyncBatchProcessor,
        EventType,
        async_process_partial_response,
    )
    from aws_lambda_powertools.utilities.data_classes.sqs_event import SQSRecord

    worker_id = f"{getattr(context, 'aws_request_id', 'local')}/{secrets.token_hex(4)}"
    remaining = context.get_remaining_time_in_millis() / 1000
    lease_seconds = remaining + min(5.0, remaining * LEASE_MARGIN)

    first = [cold]

    async def record_handler(record: SQSRecord) -> str:
        try:
            task_id = task_id_of(record.body)
        except ValueError:
            logger.error("dropping a message that names no task: %.200s", record.body)
            return "dropped"
        attribute: Any = record.raw_event.get("messageAttributes", {}).get(CORRELATION_ATTRIBUTE)
        correlation = attribute.get("stringValue") if isinstance(attribute, dict) else None
        with invocation(correlation, cold_start=first.pop() if first else False) as run:
            note(task_id=task_id)
            outcome = "failed: storage"
            try:
                if dead_letter_arn and record.event_source_arn == dead_letter_arn:
                    outcome = await runtime.dead_letter(task_id)
                else:
                    outcome = await runtime.work(task_id, worker_id, lease_seconds)
            finally:
                if report is not None:
                    report.write(run, "task run", outcome=outcome)
                else:
                    logger.info("task %s: %s", task_id, outcome)
        return outcome

    processor = AsyncBatchProcessor(event_type=EventType.SQS, raise_on_entire_batch_failure=False)
    return async_process_partial_response(
        event=event, record_handler=record_handler, processor=processor, context=context
    )
