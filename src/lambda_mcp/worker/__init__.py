"""The task worker: SQS messages and scheduled sweeps in, task runs and final statuses out."""

from .events import handle_event

__all__ = ["handle_event"]
