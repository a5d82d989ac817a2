"""The local SQS event source mapping of `lambda-mcp dev --lambda`: queue messages -> the real worker handler.

Like Lambda's SQS event source mapping it receives messages, invokes the worker handler with an
SQS event (one record per message, `eventSourceARN` naming the queue), deletes the messages that
succeeded and leaves the ones reported in `batchItemFailures` (or all, if the invocation failed)
to come back after their visibility timeout. It also feeds the dead-letter queue to the same
handler, and sends the scheduled sweep event every `sweep_seconds`, as the template's schedule does.
"""

from __future__ import annotations

import hashlib
import logging
import os
import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from .context import LambdaContext

logger = logging.getLogger("lambda_mcp.local")
Handler = Callable[[dict[str, Any], Any], Any]


def queue_arn(queue_url: str, region: str = "us-east-1") -> str:
    """`arn:aws:sqs:<region>:<account>:<name>` for an SQS queue URL (or a `memory://<name>` one)."""
    parts = queue_url.rstrip("/").split("/")
    account = parts[-2] if len(parts) >= 2 and parts[-2].isdigit() else "000000000000"
    return f"arn:aws:sqs:{region}:{account}:{parts[-1]}"


def sqs_event(messages: list[dict[str, Any]], arn: str) -> dict[str, Any]:
    now = str(int(time.time() * 1000))
    return {
        "Records": [
            {
                "messageId": m["MessageId"],
                "receiptHandle": m["ReceiptHandle"],
                "body": m["Body"],
                "attributes": {
                    "ApproximateReceiveCount": m.get("Attributes", {}).get("ApproximateReceiveCount", "1"),
                    "SentTimestamp": now,
                    "SenderId": "000000000000",
                    "ApproximateFirstReceiveTimestamp": now,
                },
                "messageAttributes": {  # the Lambda event's spelling of boto3's attributes
                    name: {"stringValue": value.get("StringValue"), "dataType": value.get("DataType", "String")}
                    for name, value in (m.get("MessageAttributes") or {}).items()
                },
                "md5OfBody": hashlib.md5(m["Body"].encode()).hexdigest(),  # noqa: S324 (SQS's own checksum)
                "eventSource": "aws:sqs",
                "eventSourceARN": arn,
                "awsRegion": arn.split(":")[3],
            }
            for m in messages
        ]
    }


def scheduled_event() -> dict[str, Any]:
    return {
        "version": "0",
        "id": "local-sweep",
        "detail-type": "Scheduled Event",
        "source": "aws.events",
        "account": "000000000000",
        "time": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "region": "us-east-1",
        "resources": ["arn:aws:events:us-east-1:000000000000:rule/lambda-mcp-sweeper"],
        "detail": {},
    }


class LocalEventSource:
    """Threads polling the task queue (`concurrency` of them, batch size 1), the dead-letter queue
    (batch size 10) and a sweep timer, each invoking `handler` like Lambda would."""

    def __init__(
        self,
        client: Any,
        queue_url: str,
        dead_letter_url: str | None,
        handler: Handler,
        *,
        worker_timeout_ms: int = 900_000,
        concurrency: int = 4,
        sweep_seconds: float = 60.0,
        dead_letter_client: Any | None = None,
    ) -> None:
        self.client = client
        self.dead_letter_client = client if dead_letter_client is None else dead_letter_client
        self.queue_url = queue_url
        self.dead_letter_url = dead_letter_url
        self.handler = handler
        self.worker_timeout_ms = worker_timeout_ms
        self.concurrency = concurrency
        self.sweep_seconds = sweep_seconds
        self.invocations = 0
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []

    def start(self) -> LocalEventSource:
        targets: list[tuple[str, Callable[[], None]]] = [
            (f"tasks-{i}", lambda: self._poll(self.client, self.queue_url, 1)) for i in range(self.concurrency)
        ]
        if self.dead_letter_url:
            dlq = self.dead_letter_url
            targets.append(("dead-letters", lambda: self._poll(self.dead_letter_client, dlq, 10)))
        targets.append(("sweeper", self._sweep))
        for name, target in targets:
            thread = threading.Thread(target=target, name=f"lambda-mcp-{name}", daemon=True)
            thread.start()
            self._threads.append(thread)
        return self

    def stop(self) -> None:
        self._stop.set()
        for thread in self._threads:
            thread.join(timeout=5)

    def _invoke(self, event: dict[str, Any]) -> Any:
        self.invocations += 1
        return self.handler(event, LambdaContext(self.worker_timeout_ms))

    def _poll(self, client: Any, url: str, batch_size: int) -> None:
        arn = queue_arn(url)
        while not self._stop.is_set():
            try:
                received = client.receive_message(
                    QueueUrl=url,
                    MaxNumberOfMessages=batch_size,
                    WaitTimeSeconds=1,
                    AttributeNames=["ApproximateReceiveCount"],
                    MessageAttributeNames=["All"],
                )
            except Exception:
                logger.exception("receiving from %s failed", url)
                self._stop.wait(1)
                continue
            messages = received.get("Messages") or []
            if not messages:
                continue
            failed: set[str]
            try:
                response = self._invoke(sqs_event(messages, arn))
                failed = {f["itemIdentifier"] for f in (response or {}).get("batchItemFailures", [])}
            except BaseException:  # the invocation died: every message comes back after its visibility timeout
                logger.exception("the worker invocation failed")
                failed = {m["MessageId"] for m in messages}
            for message in messages:
                if message["MessageId"] not in failed:
                    client.delete_message(QueueUrl=url, ReceiptHandle=message["ReceiptHandle"])

    def _sweep(self) -> None:
        while not self._stop.wait(self.sweep_seconds):
            try:
                self._invoke(scheduled_event())
            except Exception:
                logger.exception("the sweep failed")


def sweep_seconds() -> float:
    """How often the local worker sweeps (`LAMBDA_MCP_DEV_SWEEP_SECONDS`, default 60)."""
    return float(os.environ.get("LAMBDA_MCP_DEV_SWEEP_SECONDS") or 60)


def prepare_queues() -> None:
    """Point the kit at a task queue before it is built: the SQS queues `configure_queues` set up
    (moto server, with `--aws local`), or in-memory queues with the same semantics."""
    from ..tasks.sqs import use_client
    from .aws import TASK_DEAD_LETTER_QUEUE, TASK_QUEUE, visibility_timeout_seconds, worker_timeout_seconds

    # the kit's task lifetime floor follows the local worker's timeline (its timeout, its sweeps)
    os.environ.setdefault("LAMBDA_MCP_TASK_WORKER_TIMEOUT_SECONDS", str(worker_timeout_seconds()))
    os.environ.setdefault("LAMBDA_MCP_TASK_SWEEP_SECONDS", str(sweep_seconds()))
    if os.environ.get("LAMBDA_MCP_TASK_QUEUE_URL") and os.environ.get("AWS_ENDPOINT_URL_SQS"):
        return
    from .queue import InMemoryQueue

    dead_letters = InMemoryQueue(f"memory://{TASK_DEAD_LETTER_QUEUE}")
    queue = InMemoryQueue(
        f"memory://{TASK_QUEUE}", visibility_timeout=visibility_timeout_seconds(), dead_letter=dead_letters
    )
    use_client(queue.url, queue)
    use_client(dead_letters.url, dead_letters)
    os.environ["LAMBDA_MCP_TASK_QUEUE_URL"] = queue.url
    os.environ["LAMBDA_MCP_TASK_DLQ_URL"] = dead_letters.url
    os.environ["LAMBDA_MCP_TASK_DLQ_ARN"] = queue_arn(dead_letters.url)


def start_local_worker() -> LocalEventSource:
    """Feed the task queue (and its dead letters, and a sweep timer) to the real worker handler in
    this process. Call it after the HTTP handler is imported: both entrypoints then share one kit,
    and so one in-memory state."""
    from ..entrypoints.worker import handler
    from ..tasks.sqs import client_for
    from .aws import worker_timeout_seconds

    queue_url = os.environ["LAMBDA_MCP_TASK_QUEUE_URL"]
    dead_letter_url = os.environ.get("LAMBDA_MCP_TASK_DLQ_URL")
    return LocalEventSource(
        client_for(queue_url),
        queue_url,
        dead_letter_url,
        handler,
        worker_timeout_ms=int(worker_timeout_seconds() * 1000),
        sweep_seconds=sweep_seconds(),
        dead_letter_client=client_for(dead_letter_url) if dead_letter_url else None,
    ).start()
