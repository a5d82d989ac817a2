"""A task pipeline on local wires for integration tests: a fresh DynamoDB table and SQS queues, a kit over
them, and the real worker handler fed by the local event source (receive, invoke, delete successes)."""

from __future__ import annotations

import secrets
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import boto3
import pytest

from lambda_mcp.kit import Kit
from lambda_mcp.local.poller import LocalEventSource
from lambda_mcp.storage.dynamodb import create_table
from lambda_mcp.storage.records import TaskRecord
from lambda_mcp.tasks.runtime import TaskRuntime
from lambda_mcp.worker import handle_event
from tests.support.polling import until
from tests.support.queues import TaskQueues, create_task_queues


@dataclass
class WorkerStack:
    kit: Kit
    runtime: TaskRuntime
    sqs: Any
    queue_url: str
    dead_letter_url: str
    dead_letter_arn: str

    def source(self) -> LocalEventSource:
        """The worker's event source: a 1 s invocation timeout, and no scheduled sweep (tests sweep)."""

        def handler(event: dict[str, Any], context: Any) -> Any:
            return handle_event(self.runtime, event, context, self.dead_letter_arn, self.kit.stores.changes)

        return LocalEventSource(
            self.sqs, self.queue_url, self.dead_letter_url, handler, worker_timeout_ms=1000, sweep_seconds=3600
        )

    async def record(self, task_id: str) -> TaskRecord | None:
        return await self.runtime.store.get(task_id, time.time())

    async def settled(self, task_id: str, timeout: float = 30) -> TaskRecord:
        """The task once it is final; fails the test if it is gone or still running after `timeout` (stuck)."""

        async def terminal() -> TaskRecord | None:
            record = await self.record(task_id)
            assert record is not None, f"task {task_id} is gone"
            return record if record.terminal else None

        return await until(terminal, timeout=timeout, what=f"task {task_id} to end (stuck?)")

    def queued(self, url: str) -> int:
        """Messages in the queue at `url`, visible or in flight."""
        names = ["ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible"]
        attributes = self.sqs.get_queue_attributes(QueueUrl=url, AttributeNames=names)["Attributes"]
        return sum(int(attributes[n]) for n in names)


@contextmanager
def fresh_aws(
    prefix: str, monkeypatch: pytest.MonkeyPatch, dynamodb_url: str, sqs_url: str, **queue_options: Any
) -> Iterator[tuple[str, Any, TaskQueues]]:
    """A new table `prefix-<token>` and task queues, with the SDK's endpoints pointed at the local services;
    yields (table name, SQS client, queues) and deletes the table afterwards."""
    monkeypatch.setenv("AWS_ENDPOINT_URL_DYNAMODB", dynamodb_url)
    monkeypatch.setenv("AWS_ENDPOINT_URL_SQS", sqs_url)
    token = secrets.token_hex(4)
    table = f"{prefix}-{token}"
    create_table(boto3.client("dynamodb"), table)
    sqs = boto3.client("sqs")
    try:
        yield table, sqs, create_task_queues(sqs, token, **queue_options)
    finally:
        monkeypatch.setenv("AWS_ENDPOINT_URL_DYNAMODB", dynamodb_url)
        boto3.client("dynamodb").delete_table(TableName=table)
