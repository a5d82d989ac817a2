"""`SqsExecutor`: hand a task to the worker Lambda by sending one SQS message naming it.

The message carries only the task id (and, as a message attribute, the id of the request that queued
it, for the worker's logs): the worker reads everything else from the durable record, so a message is
small, can be repeated safely (the worker's claim dedups), and never holds secrets.
"""

from __future__ import annotations

import asyncio
import functools
import json
import logging
import math
from typing import Any

from ..observe.invocation import correlation_id
from ..storage.aws_clients import in_thread
from .execution import Submitted

logger = logging.getLogger("lambda_mcp")
_local_clients: dict[str, Any] = {}
BATCH = 10
"""Messages per `SendMessageBatch`: SQS's limit."""
BATCHES_AT_ONCE = 8
"""Batches in flight at once: fewer than the client's connection pool (botocore's 10)."""
MAX_DELAY_SECONDS = 900
"""SQS's longest message delay: a task that sleeps longer is woken by the sweeper (it is due then)."""
CORRELATION_ATTRIBUTE = "correlation_id"
"""The SQS message attribute carrying the id of the request that queued the task."""


def use_client(queue_url: str, client: Any) -> None:
    """Serve `queue_url` with `client` (anything with boto3's SQS `send_message`) instead of boto3:
    `lambda-mcp dev --lambda` registers its in-memory queue here."""
    _local_clients[queue_url] = client


def client_for(queue_url: str) -> Any:
    """The registered client for a local queue URL, else a botocore SQS client (endpoint from the environment)."""
    local = _local_clients.get(queue_url)
    return local if local is not None else default_client()


def default_client() -> Any:
    """An SQS client with standard-mode retries (throttling and 5xx are retried, then reported)."""
    from ..storage.aws_clients import client  # only when a task is created: not on the cold path of requests

    return client("sqs", retries={"mode": "standard", "max_attempts": 5})


def _attributes() -> dict[str, Any]:
    """The correlation id of the request at hand, so the worker's log lines for the task carry it."""
    correlation = correlation_id()
    return {} if correlation is None else {CORRELATION_ATTRIBUTE: {"DataType": "String", "StringValue": correlation}}


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

    def _sqs(self) -> Any:
        if self._client is None:
            self._client = client_for(self.queue_url)
        return self._client

    def prepare(self) -> None:
        """Build the client now rather than for the first task (SnapStart: before the snapshot)."""
        self._sqs()

    async def submit(self, task_id: str, delay_seconds: int = 0) -> None:
        send = functools.partial(
            self._sqs().send_message,
            QueueUrl=self.queue_url,
            MessageBody=message_body(task_id),
            MessageAttributes=_attributes(),
            **({"DelaySeconds": delay_seconds} if delay_seconds else {}),
        )
        await in_thread(send)  # off the event loop, like every storage call

    async def submit_later(self, task_id: str, delay: float) -> None:
        """A message delayed past the wake-up (whole seconds, one more: a message that comes early is skipped)
        when that fits SQS's 15 minutes; a longer sleep is woken by the sweeper, at most one sweep late."""
        seconds = math.ceil(delay) + 1 if delay > 0 else 0
        if seconds <= MAX_DELAY_SECONDS:
            await self.submit(task_id, seconds)

    async def submit_many(self, task_ids: list[str]) -> Submitted:
        """One `SendMessageBatch` per 10 tasks, the batches at once: a sweep that requeues thousands of
        tasks makes a tenth of the requests. Each task is sent, failed (an entry SQS refused) or ambiguous
        (its batch's request raised past the client's retries: its messages may have been delivered)."""
        batches = [task_ids[start : start + BATCH] for start in range(0, len(task_ids), BATCH)]
        room = asyncio.Semaphore(BATCHES_AT_ONCE)
        done = Submitted()
        for sent, failed, ambiguous in await asyncio.gather(*(self._send_batch(batch, room) for batch in batches)):
            done.sent.extend(sent)
            done.failed.extend(failed)
            done.ambiguous.extend(ambiguous)
        return done

    async def _send_batch(self, task_ids: list[str], room: asyncio.Semaphore) -> tuple[list[str], list[str], list[str]]:
        """(sent, failed, ambiguous) of one batch."""
        attributes = _attributes()
        entries = [
            {"Id": str(index), "MessageBody": message_body(task_id), "MessageAttributes": attributes}
            for index, task_id in enumerate(task_ids)
        ]
        send = functools.partial(self._sqs().send_message_batch, QueueUrl=self.queue_url, Entries=entries)
        try:
            async with room:
                answer = await in_thread(send)
        except Exception:
            logger.exception("could not queue %d tasks (their messages may have been delivered)", len(task_ids))
            return [], [], task_ids
        failed = [task_ids[int(entry["Id"])] for entry in answer.get("Failed", [])]
        if failed:
            logger.warning("could not queue tasks %s: %s", failed, answer["Failed"][0].get("Message", ""))
        refused = set(failed)
        return [task_id for task_id in task_ids if task_id not in refused], failed, []

    def cancel(self, task_id: str) -> None:
        """Nothing to do here: the worker watches the record and stops when it reads `cancelled`."""
