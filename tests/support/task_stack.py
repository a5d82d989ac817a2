"""A task pipeline on local wires for integration tests: a fresh DynamoDB table and SQS queues, a kit over
them, and the real worker handler fed by the local event source (receive, invoke, delete successes);
`proxied_stack` puts the fault proxy (tests/support/fault_proxy.py) between the kit and both services."""

from __future__ import annotations

import secrets
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import boto3
import pytest
from botocore.retries.standard import ExponentialBackoff

from lambda_mcp.config import Settings
from lambda_mcp.kit import Kit, build_kit
from lambda_mcp.local.poller import LocalEventSource
from lambda_mcp.server.app import MCPApp
from lambda_mcp.storage.dynamodb import create_table
from lambda_mcp.storage.records import TaskRecord
from lambda_mcp.tasks.runtime import TaskRuntime
from lambda_mcp.worker import handle_event
from tests.support.fault_proxy import FaultProxy
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


@dataclass
class ProxiedStack(WorkerStack):
    """A `WorkerStack` whose kit reaches DynamoDB Local and SQS through fault proxies (`ddb`, `sqs_proxy`)."""

    ddb: FaultProxy
    sqs_proxy: FaultProxy
    table: str

    def items(self, prefix: str) -> list[dict[str, Any]]:
        """Every item whose key starts with `prefix` (a Scan of the table itself, past the proxy)."""
        items = boto3.client("dynamodb").scan(TableName=self.table)["Items"]
        return [i for i in items if i["pk"]["S"].startswith(prefix)]

    def drained(self) -> bool:
        """Every task message received and deleted (the worker's invocations for them returned)."""
        return self.queued(self.queue_url) == 0


@contextmanager
def proxied_stack(
    prefix: str,
    monkeypatch: pytest.MonkeyPatch,
    dynamodb_url: str,
    sqs_url: str,
    app: MCPApp,
    stack: type[ProxiedStack] = ProxiedStack,
    **settings: Any,
) -> Iterator[Any]:
    """A fresh table and queues (`fresh_aws`), the kit's clients through fault proxies in front of both,
    botocore's backoff cut to 2 ms (a retry storm takes milliseconds), and a buffered kit of `app` with a
    1 s worker timeout and sweep; `settings` add to or replace those. Yields a `stack` (a `ProxiedStack`)."""
    monkeypatch.setattr(ExponentialBackoff, "delay_amount", lambda self, context: 0.002)
    with fresh_aws(prefix, monkeypatch, dynamodb_url, sqs_url) as (table, sqs, queues):
        ddb, sqs_proxy = FaultProxy(dynamodb_url), FaultProxy(sqs_url)
        monkeypatch.setenv("AWS_ENDPOINT_URL_DYNAMODB", ddb.url)  # the kit's own clients go through the proxies
        monkeypatch.setenv("AWS_ENDPOINT_URL_SQS", sqs_proxy.url)
        base: dict[str, Any] = {
            "table_name": table,
            "task_queue_url": queues.url,
            "task_dead_letter_arn": queues.dead_letter_arn,
            "state_key": b"k" * 32,
            "task_worker_timeout_seconds": 1,
            "task_sweep_seconds": 1,
        }
        kit = build_kit(app, Settings(**{**base, **settings}), streaming=False, local=True)
        assert kit.task_runtime is not None
        try:
            yield stack(
                kit,
                kit.task_runtime,
                sqs,
                queues.url,
                queues.dead_letter_url,
                queues.dead_letter_arn,
                ddb,
                sqs_proxy,
                table,
            )
        finally:
            ddb.stop()
            sqs_proxy.stop()
