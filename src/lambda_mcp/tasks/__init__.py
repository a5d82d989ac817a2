"""Tasks: the durable record of a long or task-augmented call, its state machine and its store port."""

from ..protocol.ids import new_task_id
from .model import TERMINAL, InvalidTransition, TaskRecord, TaskStatus, transition
from .store import InMemoryTaskStore, TaskStore

__all__ = [
    "TERMINAL",
    "InMemoryTaskStore",
    "InvalidTransition",
    "TaskRecord",
    "TaskStatus",
    "TaskStore",
    "new_task_id",
    "transition",
]
