"""`InMemoryQueue`: the SQS behaviour the task worker relies on, in memory, for `lambda-mcp dev --lambda`.

It answers the few boto3 SQS calls the kit and the local poller make (`send_message`,
`send_message_batch`, `receive_message`, `delete_message`) with SQS's semantics: a message sent with
`DelaySeconds` is invisible until then; a received message is invisible for the visibility timeout and
comes back if not deleted; after `max_receives` receives it moves to the dead-letter queue. `--aws local`
uses moto server's real SQS API instead.
"""

from __future__ import annotations

import secrets
import threading
import time
from dataclasses import dataclass, field
from typing import Any


@dataclass
class _Message:
    message_id: str
    body: str
    attributes: dict[str, Any] = field(default_factory=dict)
    """SQS message attributes, as boto3 gives them (`{"name": {"DataType": ..., "StringValue": ...}}`)."""
    receives: int = 0
    visible_at: float = 0.0
    receipt: str = ""


@dataclass
class InMemoryQueue:
    url: str
    visibility_timeout: float = 30.0
    max_receives: int = 3
    dead_letter: InMemoryQueue | None = None
    _messages: list[_Message] = field(default_factory=list)
    _lock: threading.Condition = field(default_factory=threading.Condition)

    def send_message(
        self,
        QueueUrl: str,  # noqa: N803 (boto3 names)
        MessageBody: str,  # noqa: N803
        MessageAttributes: dict[str, Any] | None = None,  # noqa: N803
        DelaySeconds: int = 0,  # noqa: N803
        **_: Any,
    ) -> dict[str, Any]:
        message = _Message(secrets.token_hex(16), MessageBody, dict(MessageAttributes or {}))
        message.visible_at = time.monotonic() + DelaySeconds
        with self._lock:
            self._messages.append(message)
            self._lock.notify_all()
        return {"MessageId": message.message_id}

    def send_message_batch(self, QueueUrl: str, Entries: list[dict[str, Any]], **_: Any) -> dict[str, Any]:  # noqa: N803
        sent = [
            {"Id": entry["Id"], **self.send_message(QueueUrl, entry["MessageBody"], entry.get("MessageAttributes"))}
            for entry in Entries
        ]
        return {"Successful": sent, "Failed": []}

    def receive_message(
        self,
        QueueUrl: str,  # noqa: N803
        MaxNumberOfMessages: int = 1,  # noqa: N803
        WaitTimeSeconds: float = 0,  # noqa: N803
        VisibilityTimeout: float | None = None,  # noqa: N803
        **_: Any,
    ) -> dict[str, Any]:
        deadline = time.monotonic() + WaitTimeSeconds
        with self._lock:
            while True:
                taken = self._take(MaxNumberOfMessages, VisibilityTimeout)
                remaining = deadline - time.monotonic()
                if taken or remaining <= 0:
                    break
                self._lock.wait(min(remaining, 0.2))
        return {"Messages": taken} if taken else {}

    def _take(self, limit: int, visibility: float | None) -> list[dict[str, Any]]:
        now = time.monotonic()
        taken: list[dict[str, Any]] = []
        for message in list(self._messages):
            if len(taken) >= limit:
                break
            if message.visible_at > now:
                continue
            if message.receives >= self.max_receives and self.dead_letter is not None:
                self._messages.remove(message)  # SQS redrives on the receive after the last allowed one
                self.dead_letter.send_message(
                    QueueUrl=self.dead_letter.url, MessageBody=message.body, MessageAttributes=message.attributes
                )
                continue
            message.receives += 1
            message.visible_at = now + (self.visibility_timeout if visibility is None else visibility)
            message.receipt = secrets.token_hex(16)
            taken.append(
                {
                    "MessageId": message.message_id,
                    "ReceiptHandle": message.receipt,
                    "Body": message.body,
                    "MessageAttributes": message.attributes,
                    "Attributes": {"ApproximateReceiveCount": str(message.receives)},
                }
            )
        return taken

    def delete_message(self, QueueUrl: str, ReceiptHandle: str, **_: Any) -> dict[str, Any]:  # noqa: N803
        with self._lock:
            self._messages = [m for m in self._messages if m.receipt != ReceiptHandle]
        return {}

    def depth(self) -> int:
        """Messages in the queue, visible or not (SQS's ApproximateNumberOfMessages plus NotVisible)."""
        with self._lock:
            return len(self._messages)
