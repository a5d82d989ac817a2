"""Persistence ports (what state the kit needs) and their in-memory adapters.

AWS adapters live in `storage.dynamodb` and are never imported from here, so boto3 stays out of
deployments that do not use it.
"""

from .errors import ConflictError, NotFoundError, StorageError
from .memory import InMemoryCallStore, InMemoryChangeLog, InMemoryEventLog, InMemorySessionStore, InMemoryTaskStore
from .ports import CallStore, ChangeLog, EventLog, SessionStore, TaskStore
from .records import CallRecord, Change, SessionRecord, StoredEvent, TaskRecord

__all__ = [
    "CallRecord",
    "CallStore",
    "Change",
    "ChangeLog",
    "InMemoryCallStore",
    "InMemoryChangeLog",
    "ConflictError",
    "EventLog",
    "InMemoryEventLog",
    "InMemorySessionStore",
    "InMemoryTaskStore",
    "NotFoundError",
    "SessionRecord",
    "SessionStore",
    "StorageError",
    "StoredEvent",
    "TaskRecord",
    "TaskStore",
]
