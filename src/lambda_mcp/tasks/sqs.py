"""`SqsExecutor`: hand a task to the worker Lambda by sending one SQS message naming it.

The message carries only the task id (and, as a message attribute, the id of the request that queued
it, for the worker's logs): the worker reads everything else from the durable record, so a message is
small, can be repeated safely (the worker's claim dedups), and never holds secrets.
"""

from __future__ import annotations

import functools
import json
from typing import Any

import anyio.to_thread

from ..observe.invocation import correlation_id

_local_clients: dict[str, Any] = {}
CORRELATION_ATTRIBUTE = "correlation_id"
"""The SQS message attribute carrying the id of the request that queued the task."""


def use_client(queue_url: str, client: Any) -> None:
    """Serve `queue_url` with `client` (anything with boto3's SQS `send_message`) instead of boto3:
    `lambda-mcp dev --lambda` registers its in-memory queue here."""
    _local_clients[queue_url] = client


def client_for(queue_url: str) -> Any:
    """The registered client for a local queue URL, else a boto3 SQS client (endpoint from the environment)."""
    local = _local_clients.get(queue_url)
    return local if local is not None else default_client()


def default_client() -> Any:
    """An SQS client with standard-mode retries (throttling and 5xx are retried, then reported)."""
    import boto3  # only when a task is created: not on the cold path of ordinary requests
    from botocore.config import Config

    return boto3.client("sqs", config=Config(retries={"mode": "standard", "max_attempts": 5}))


def message_body(task_id: str) -> str:
    return json.dumps({"taskId": task_id}, separators=(",", ":"))


def task_id_of(body: str) -> str:
    """The task id of a queue message; ValueError for anything else."""
    decoded = json.loads(body)
    task_id = decoded.get("taskId") if isinstance(decoded, dict) else None
    if not isinstance(task_id, str) or not task_id:
        raise ValueError("not a lambda-mcp task message")
    return task_id


class SqsExecutor:
    def __init__(self, queue_url: str, client: Any | None = None) -> None:
        self.queue_url = queue_url
        self._client = client

    async def submit(self, task_id: str) -> None:
        if self._client is None:
            self._client = client_for(self.queue_url)
        attributes = {}
        correlation = correlation_id()
        if correlation is not None:  # the worker's log lines for this task carry the request's id
            attributes[CORRELATION_ATTRIBUTE] = {"DataType": "String", "StringValue": correlation}
        send = functools.partial(
            self._client.send_message,
            QueueUrl=self.queue_url,
            MessageBody=message_body(task_id),
            MessageAttributes=attributes,
        )
        await anyio.to_thread.run_sync(send)  # off the event loop, like every storage call

    def cancel(self, task_id: str) -> None:
        """Nothing to do here: the worker watches the record and stops when it reads `cancelled`."""
