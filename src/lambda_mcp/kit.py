"""Composition root: builds the dispatcher, stores and endpoint for an app; the only module naming adapters."""

from __future__ import annotations

import logging
import secrets
import weakref
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from .config import Settings
from .dispatch.dispatcher import Dispatcher
from .dispatch.request_state import StateSealer
from .dispatch.runner import HandlerRunner
from .protocol.values import Struct, lean_dataclass
from .server.app import MCPApp
from .state_keys import FixedKey, KeyRing, SecretKey
from .storage.memory import (
    InMemoryCallStore,
    InMemoryChangeLog,
    InMemoryEventLog,
    InMemorySessionStore,
    InMemoryTaskStore,
)
from .storage.ports import CallStore, ChangeLog, EventLog, SessionStore, TaskStore
from .tasks.execution import Execute, Executor
from .tasks.runtime import TaskRuntime
from .transport.access import Access
from .transport.app import HttpApp, create_app
from .transport.buffered import BufferedTransport
from .transport.endpoint import MCPEndpoint, Transport
from .transport.front import Front
from .transport.security import LOOPBACK_HOSTS, LOOPBACK_ORIGINS

if TYPE_CHECKING:
    from .facade.routes import Facade
    from .storage.facade import FacadeStore

logger = logging.getLogger("lambda_mcp")
_warned: weakref.WeakSet[MCPApp] = weakref.WeakSet()
"""Apps already warned about scopes under auth `none` (once per app and process, however many kits)."""


@lean_dataclass(frozen=True)  # a frozen dataclass (`dataclasses.replace`), built lean (protocol/values.py)
class Stores:
    """Every store a kit keeps state in: all in memory, or all in one DynamoDB table (never a mix, which
    would split state between instances without anyone noticing)."""

    sessions: SessionStore
    events: EventLog
    tasks: TaskStore
    calls: CallStore
    changes: ChangeLog
    facade: FacadeStore | Callable[[], FacadeStore] | None = None
    """The authorization facade's clients, codes and refresh tokens (`LAMBDA_MCP_AUTH=proxy`), or what
    makes them when a kit first needs them (None: in memory). Other auth modes never import it."""

    def facade_store(self) -> FacadeStore:
        if self.facade is None:
            from .storage.facade import InMemoryFacadeStore

            return InMemoryFacadeStore()
        return self.facade() if callable(self.facade) else self.facade

    @classmethod
    def memory(cls) -> Stores:
        return cls(
            InMemorySessionStore(), InMemoryEventLog(), InMemoryTaskStore(), InMemoryCallStore(), InMemoryChangeLog()
        )

    @classmethod
    def dynamodb(
        cls, table: str, *, client: Any | None = None, session_ttl_seconds: float = 3600.0, shards: int = 1
    ) -> Stores:
        """The DynamoDB adapters on `table`: botocore loads and each client is built on its first call, not here."""
        from .storage.dynamodb import (
            DynamoDBCallStore,
            DynamoDBChangeLog,
            DynamoDBEventLog,
            DynamoDBSessionStore,
            DynamoDBTaskStore,
        )

        def facade() -> FacadeStore:
            from .storage.dynamodb.facade import DynamoDBFacadeStore

            return DynamoDBFacadeStore(table, client=client)

        return cls(
            DynamoDBSessionStore(table, client=client),
            DynamoDBEventLog(table, client=client, ttl_seconds=session_ttl_seconds),
            DynamoDBTaskStore(table, client=client, shards=shards),
            DynamoDBCallStore(table, client=client),
            DynamoDBChangeLog(table, client=client, shards=shards),
            facade,
        )


class Kit(Struct):
    """The parts of one deployment, built from its settings: the app, stores, dispatcher and endpoint."""

    __slots__ = ("app", "settings", "stores", "dispatcher", "endpoint", "access", "task_runtime", "facade")
    app: MCPApp
    settings: Settings
    stores: Stores
    dispatcher: Dispatcher
    endpoint: MCPEndpoint
    access: Access
    task_runtime: TaskRuntime | None
    facade: Facade | None
    """The authorization facade (`LAMBDA_MCP_AUTH=proxy`), whose routes the ASGI app serves."""

    def __init__(
        self,
        app: MCPApp,
        settings: Settings,
        stores: Stores,
        dispatcher: Dispatcher,
        endpoint: MCPEndpoint,
        access: Access,
        task_runtime: TaskRuntime | None = None,
        facade: Facade | None = None,
    ) -> None:
        self.app = app
        self.settings = settings
        self.stores = stores
        self.dispatcher = dispatcher
        self.endpoint = endpoint
        self.access = access
        self.task_runtime = task_runtime
        self.facade = facade

    def asgi(self, path: str = "/mcp") -> HttpApp:
        """The ASGI application serving this kit: `/mcp`, the well-known documents, `/healthz` (and the
        authorization facade's routes in `proxy` mode)."""
        routes = self.facade.routes if self.facade is not None else None
        return create_app(self.endpoint, self.access, self.app.lifespans, self.endpoint.front.origins, path, routes)

    @property
    def sessions(self) -> SessionStore:
        return self.stores.sessions

    @property
    def events(self) -> EventLog:
        return self.stores.events


def build_kit(
    app: MCPApp,
    settings: Settings,
    *,
    streaming: bool,
    local: bool = False,
    stores: Stores | None = None,
    stateless: bool = False,
) -> Kit:
    """Wire a kit. State lives in `stores` when given (several kits sharing them act as instances of one
    deployment), else in DynamoDB when `settings.table_name` is set, else in memory. The app is not
    changed: two kits may serve one app. `local=True` (the dev server) allows loopback Host/Origin
    and, when no `LAMBDA_MCP_STATE_KEY` is set, seals `requestState` with a random per-process key.
    `stateless=True` (AgentCore Runtime) serves a legacy POST naming no session the kit knows without one."""
    warn_unenforced_scopes(app, settings)
    key: bytes | KeyRing | None = settings.state_key
    if key is None and settings.state_key_secret:
        key = SecretKey(settings.state_key_secret)
    if key is None and local:
        key = secrets.token_bytes(32)
    if stores is None:
        table = settings.table_name
        ttl, shards = settings.session_ttl_seconds, settings.shards
        stores = Stores.dynamodb(table, session_ttl_seconds=ttl, shards=shards) if table else Stores.memory()
    sessions, events = stores.sessions, stores.events
    if streaming and settings.session_cache_seconds > 0:  # one long-lived process: reuse recent reads
        from .storage.cached import CachedSessions

        sessions = CachedSessions(sessions, settings.session_cache_seconds)
    runner = HandlerRunner(app, StateSealer(key), sync_in_threads=streaming, skip_waits=settings.skip_waits)
    tasks = _task_runtime(settings, streaming, stores.tasks, events, runner.execute_task)
    dispatcher = Dispatcher(app, sessions, runner, stores.calls, session_ttl=settings.session_ttl_seconds, tasks=tasks)
    access = Access(app, settings)
    facade = None
    if settings.auth == "proxy":  # imported only in this mode
        from .facade.routes import Facade

        ring = FixedKey(key) if isinstance(key, bytes) else key
        facade = Facade(
            settings,
            stores.facade_store(),
            server_name=app.name,
            tool_scopes=app.scopes_supported,
            state_keys=ring.in_use if ring is not None else None,
            connections=app.connections,
        )
        access.guard = facade.guard
        runner.credentials = facade.credentials
        facade.connection_flow.completed = _elicitation_completed(app, stores)
    front = Front(
        app,
        sessions,
        settings,
        access,
        default_hosts=LOOPBACK_HOSTS if local else (),
        default_origins=LOOPBACK_ORIGINS if local else (),
        stateless=stateless,
    )
    transport: Transport
    if streaming:  # the streaming server's (`serve`, `dev`): a Lambda handler never loads it
        from .transport.streaming import StreamingTransport

        transport = StreamingTransport(dispatcher, sessions, events, settings)
    else:
        transport = BufferedTransport(dispatcher, sessions, events, stores.calls, stores.changes, settings)
    endpoint = MCPEndpoint(front, transport, dispatcher, sessions, stores.calls, stores.changes)
    return Kit(app, settings, stores, dispatcher, endpoint, access, tasks, facade)


def _elicitation_completed(app: MCPApp, stores: Stores) -> Callable[[str, str], Awaitable[None]]:
    """How the facade tells a 2025-11-25 session its URL elicitation finished: a change for that principal,
    to this process's listeners and the durable change log (other instances' GET streams)."""

    async def completed(elicitation_id: str, principal: str) -> None:
        from .server.changes import publishing_to

        with publishing_to(stores.changes):
            await app.changes.publish("elicitation", elicitation_id, principal)

    return completed


def warn_unenforced_scopes(app: MCPApp, settings: Settings) -> None:
    """Under auth `none`, log once (per app and process) which tools, resources and prompts declare scopes:
    they are listed and run for anyone, which a test passing locally would not show."""
    if settings.auth != "none" or app in _warned:
        return
    scoped = [
        *(f"tool {name!r}" for name, tool in app.tools.items() if tool.scopes),
        *(f"resource {uri!r}" for uri, found in (*app.resources.items(), *app.templates.items()) if found.scopes),
        *(f"prompt {name!r}" for name, prompt in app.prompts.items() if prompt.scopes),
    ]
    if scoped:
        _warned.add(app)
        logger.warning(
            "scopes are not enforced under LAMBDA_MCP_AUTH=none: %s declare scopes, yet every caller may list and"
            " use them; to enforce them set LAMBDA_MCP_AUTH=jwt (the kit checks bearer tokens) or gateway (API"
            " Gateway's JWT or Lambda authorizer passes the token's scopes; an IAM caller holds none)",
            ", ".join(scoped),
        )


def _task_runtime(
    settings: Settings, streaming: bool, store: TaskStore, events: EventLog, execute: Execute
) -> TaskRuntime | None:
    """Tasks run on the SQS worker when a queue is configured (Lambda, buffered or streaming: a frozen
    environment runs nothing between invocations), or as Lambda durable executions (`TASK_BACKEND=durable`),
    else on a streaming server's own loop (`lambda-mcp dev`); with none (a Lambda without a worker) no tasks
    are offered."""
    durable = settings.task_durable_function if settings.task_backend == "durable" else None
    if not streaming and not settings.task_queue_url and not durable:
        return None
    executor: Executor
    if durable:
        from .tasks.durable import DurableExecutor

        executor = DurableExecutor(durable)
    elif not settings.task_queue_url:
        from .tasks.inprocess import InProcessExecutor

        executor = InProcessExecutor(lambda task_id: runtime.run(task_id))
    else:
        from .tasks.sqs import SqsExecutor

        executor = SqsExecutor(settings.task_queue_url)
    runtime = TaskRuntime(
        store,
        executor,
        execute,
        events=events,
        max_ttl_ms=int(settings.task_max_ttl_seconds * 1000),
        max_attempts=settings.task_max_attempts,
        worker_timeout_seconds=settings.task_worker_timeout_seconds,
        sweep_seconds=settings.task_sweep_seconds,
        skip_waits=settings.skip_waits,
    )
    return runtime
