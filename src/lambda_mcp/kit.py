"""Composition root: builds the dispatcher, stores and endpoint for an app; the only module naming adapters."""

from __future__ import annotations

import secrets
from dataclasses import dataclass

from .config import Settings
from .dispatch.dispatcher import Dispatcher
from .dispatch.request_state import StateSealer
from .dispatch.runner import HandlerRunner
from .server.app import MCPApp
from .storage.memory import InMemoryCallStore, InMemoryChangeLog, InMemoryEventLog, InMemorySessionStore
from .storage.ports import CallStore, ChangeLog, EventLog, SessionStore
from .tasks import InMemoryTaskStore, TaskStore
from .tasks.runtime import Execute, Executor, InProcessExecutor, TaskRuntime
from .transport.access import Access
from .transport.buffered import BufferedTransport
from .transport.endpoint import MCPEndpoint, Transport
from .transport.front import Front
from .transport.security import LOOPBACK_HOSTS, LOOPBACK_ORIGINS
from .transport.streaming import StreamingTransport


@dataclass
class Kit:
    app: MCPApp
    settings: Settings
    sessions: SessionStore
    events: EventLog
    dispatcher: Dispatcher
    endpoint: MCPEndpoint
    access: Access
    tasks: TaskRuntime | None = None


def build_kit(
    app: MCPApp,
    settings: Settings,
    *,
    streaming: bool,
    local: bool = False,
    sessions: SessionStore | None = None,
    events: EventLog | None = None,
    task_store: TaskStore | None = None,
    calls: CallStore | None = None,
    changes: ChangeLog | None = None,
) -> Kit:
    """Wire a kit. State lives in DynamoDB when `settings.table_name` is set, else in memory.
    `local=True` (the dev server) allows loopback Host/Origin and, when no
    `LAMBDA_MCP_STATE_KEY` is set, seals `requestState` with a random per-process key."""
    key = settings.state_key
    if key is None and local:
        key = secrets.token_bytes(32)
    if settings.table_name and (sessions is None or events is None or task_store is None):
        from .storage.dynamodb import (  # boto3 only when configured
            DynamoDBCallStore,
            DynamoDBChangeLog,
            DynamoDBEventLog,
            DynamoDBSessionStore,
            DynamoDBTaskStore,
        )

        sessions = sessions or DynamoDBSessionStore(settings.table_name)
        events = events or DynamoDBEventLog(settings.table_name, ttl_seconds=settings.session_ttl_seconds)
        task_store = task_store or DynamoDBTaskStore(settings.table_name)
        calls = calls or DynamoDBCallStore(settings.table_name)
        changes = changes or DynamoDBChangeLog(settings.table_name)
    calls = calls or InMemoryCallStore()
    changes = changes or InMemoryChangeLog()
    app.changes.log = changes
    sessions = sessions or InMemorySessionStore()
    events = events or InMemoryEventLog()
    runner = HandlerRunner(app, StateSealer(key))
    tasks = _task_runtime(settings, streaming, task_store or InMemoryTaskStore(), events, runner.execute_task)
    dispatcher = Dispatcher(app, sessions, runner, session_ttl=settings.session_ttl_seconds, tasks=tasks)
    access = Access(app, settings)
    front = Front(
        app,
        sessions,
        settings,
        access,
        default_hosts=LOOPBACK_HOSTS if local else (),
        default_origins=LOOPBACK_ORIGINS if local else (),
    )
    transport: Transport
    if streaming:
        transport = StreamingTransport(dispatcher, sessions, events, settings)
    else:
        transport = BufferedTransport(dispatcher, sessions, events, calls, changes, settings)
    endpoint = MCPEndpoint(front, transport, dispatcher, sessions)
    return Kit(app, settings, sessions, events, dispatcher, endpoint, access, tasks)


def _task_runtime(
    settings: Settings, streaming: bool, store: TaskStore, events: EventLog, execute: Execute
) -> TaskRuntime | None:
    """Tasks run on the streaming dev server's own loop, or on the SQS worker when a queue is
    configured; with neither (a Lambda without a worker) no tasks are offered."""
    if not streaming and not settings.task_queue_url:
        return None
    executor: Executor
    if streaming:
        executor = InProcessExecutor(lambda task_id: runtime.run(task_id))
    else:
        from .tasks.sqs import SqsExecutor

        assert settings.task_queue_url is not None
        executor = SqsExecutor(settings.task_queue_url)
    runtime = TaskRuntime(
        store,
        executor,
        execute,
        events=events,
        max_ttl_ms=int(settings.task_max_ttl_seconds * 1000),
        max_attempts=settings.task_max_attempts,
    )
    return runtime
