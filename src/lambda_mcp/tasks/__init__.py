"""Tasks: long or task-augmented calls, their state machine and their runtime (the record, its store
port and adapters are storage's)."""

from ..protocol.ids import new_task_id
from ..storage.memory import InMemoryTaskStore
from ..storage.ports import TaskStore
from .model import TERMINAL, InvalidTransition, TaskRecord, TaskStatus, transition

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
