"""A task queue with its dead-letter queue on moto server's SQS, shaped as template.yaml shapes them."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class TaskQueues:
    url: str
    dead_letter_url: str
    dead_letter_arn: str


def create_task_queues(sqs: Any, token: str, *, max_receives: int = 3, visibility_seconds: int = 2) -> TaskQueues:
    """A dead-letter queue, and a task queue that moves a message there on its `max_receives + 1`th receive."""
    dead_letter_url = sqs.create_queue(QueueName=f"dlq-{token}")["QueueUrl"]
    attributes = sqs.get_queue_attributes(QueueUrl=dead_letter_url, AttributeNames=["QueueArn"])["Attributes"]
    redrive = json.dumps({"deadLetterTargetArn": attributes["QueueArn"], "maxReceiveCount": str(max_receives)})
    queue_url = sqs.create_queue(
        QueueName=f"tasks-{token}",
        Attributes={"VisibilityTimeout": str(visibility_seconds), "RedrivePolicy": redrive},
    )["QueueUrl"]
    return TaskQueues(queue_url, dead_letter_url, attributes["QueueArn"])
