"""Build the kit's AWS clients (DynamoDB state, the SQS task queue) on one botocore session per process.

Only called when a request first needs AWS, never at import: a request that touches no storage loads
none of botocore's client machinery. The client is botocore's own (boto3's clients are these), built
on a botocore session rather than through boto3, whose import adds about 20 ms to the first storage
call and nothing a client uses. One session for every client of the process, so the service model and
endpoint data it loads once are reused by the next client (each store builds its own).

Their calls block, so they run on a worker thread (`in_thread`), the event loop serving other work
meanwhile: on threads of the kit's own pool rather than through `anyio.to_thread`, whose asyncio backend
costs the first storage call of a cold start about 75 million instructions (over 10 ms) to import.
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
import os
import threading
import weakref
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from concurrent.futures import ThreadPoolExecutor

T = TypeVar("T")
_lock = threading.Lock()
THREADS = 40
"""Calls of AWS clients running at once, at most (as `anyio.to_thread`'s default limit, the kit's before)."""
_made: weakref.WeakKeyDictionary[Any, Any] = weakref.WeakKeyDictionary()
"""Each client `client` built, with its session: what `renew` renews after a SnapStart restore."""
_sessions: list[Any] = []


def client(service: str, **config: Any) -> Any:
    """A botocore client for `service` (region, endpoint and credentials from the environment, as boto3's
    would be), with `config` as its `botocore.config.Config` options."""
    from botocore.config import Config

    with _lock:  # a botocore session is not thread-safe: build one client at a time
        session = _session()
        made = session.create_client(service, config=Config(**config))
        _made[made] = session
        return made


async def in_thread(call: Callable[[], T]) -> T:
    """`call()` on a thread of the kit's pool, with this task's context variables, awaited without blocking
    the loop (a cancelled caller stops waiting; the call itself runs to its end, as with `anyio.to_thread`)."""
    return await asyncio.get_running_loop().run_in_executor(_pool(), contextvars.copy_context().run, call)


@functools.cache
def _pool() -> ThreadPoolExecutor:
    """The process's pool for AWS calls, made on first use (threads start as calls need them)."""
    from concurrent.futures import ThreadPoolExecutor

    return ThreadPoolExecutor(THREADS, thread_name_prefix="lambda-mcp-aws")


def _session() -> Any:
    """The process's session; a new one if botocore's built-in handlers changed since (a test library such
    as moto adds one when imported, and boto3 would build its next default session with it too), or if the
    environment's static credentials did (a test's fake ones: a client then signs with those it sees)."""
    from botocore.handlers import BUILTIN_HANDLERS

    static = environment_credentials(os.environ)
    return _session_with(len(BUILTIN_HANDLERS), tuple(sorted(static.items())) if static else None)


@functools.cache
def _session_with(handlers: int, static: tuple[tuple[str, str], ...] | None = None) -> Any:
    import botocore.session

    session = botocore.session.get_session()
    data_path = session.get_config_variable("data_path")  # AWS_DATA_PATH, as botocore's own loader reads it
    paths = (
        None if data_path is None else [os.path.expanduser(os.path.expandvars(p)) for p in data_path.split(os.pathsep)]
    )
    session.register_component("data_loader", _loader_class()(extra_search_paths=paths))
    if static:
        session.set_credentials(**dict(static))  # what botocore's chain would find first, without building it
    _sessions.append(session)
    return session


@functools.cache
def _loader_class() -> type[Any]:
    """botocore's `Loader`, except in how it tells whether a service is known before loading its model:
    by looking in that service's own directories, not by listing the directories of every service on
    every search path (twice per client, ~400 services: about 20 ms of the 60 ms a client takes)."""
    from botocore.loaders import Loader

    class KnownServices(Sequence[str]):
        """The services with a `type_name` model; membership is asked of the service's directories
        alone (with botocore's rule: a version directory holding that model), the full list only if read."""

        def __init__(self, loader: Loader, type_name: str) -> None:
            self._loader, self._type_name = loader, type_name
            self._listed: list[str] | None = None

        def __contains__(self, name: object) -> bool:
            if not isinstance(name, str) or name in ("", ".", "..") or os.sep in name:
                return False  # botocore's listing holds only the names of directories on a search path
            for path in self._loader.search_paths:  # its rule: a directory holding a version with that model
                folder = os.path.join(path, name)
                if os.path.isdir(path) and os.path.isdir(folder):
                    model = self._type_name
                    if any(self._loader.file_loader.exists(os.path.join(folder, v, model)) for v in os.listdir(folder)):
                        return True
            return False

        def __getitem__(self, index: Any) -> Any:
            return self._all()[index]

        def __len__(self) -> int:
            return len(self._all())

        def _all(self) -> list[str]:
            if self._listed is None:
                self._listed = Loader.list_available_services(self._loader, self._type_name)
            return self._listed

    class ServiceLoader(Loader):  # type: ignore[misc]
        def list_available_services(self, type_name: str) -> KnownServices:
            return KnownServices(self, type_name)

    return ServiceLoader


def environment_credentials(environ: Mapping[str, str]) -> dict[str, str] | None:
    """The static credentials botocore's chain would take from the environment, where a Lambda function's
    role puts them; None when its environment provider would do more (credentials that expire and are
    refreshed, a partial pair it reports) or there are none, so the chain looks further as before."""
    key, secret = environ.get("AWS_ACCESS_KEY_ID"), environ.get("AWS_SECRET_ACCESS_KEY")
    if not key or not secret or environ.get("AWS_CREDENTIAL_EXPIRATION"):
        return None
    found = {"access_key": key, "secret_key": secret}
    if token := environ.get("AWS_SECURITY_TOKEN") or environ.get("AWS_SESSION_TOKEN"):  # botocore's order
        found["token"] = token
    if account := environ.get("AWS_ACCOUNT_ID"):  # account-based DynamoDB endpoints use it
        found["account_id"] = account
    return found


def renew() -> None:
    """After a SnapStart restore (entrypoints/_snapstart.py), in each restored environment: every client built
    before the snapshot drops its pooled connections (the snapshot's, which every environment restored from it
    holds) and signs with credentials resolved again, at its next call: from this environment's variables, or
    the chain (the container credentials Lambda gives a SnapStart function). Nothing is fetched here: the
    hook stays quick, and only the first call that needs AWS pays the resolution, once per session."""
    with _lock:
        for session in _sessions:
            session._credentials = None  # botocore keeps what it resolved; unset, it asks the chain again
            if static := environment_credentials(os.environ):
                session.set_credentials(**static)
        fresh = {id(session): _ResolvedAtNextUse(session) for session in _sessions}
        for made, session in list(_made.items()):
            made.close()  # its endpoint's pool: the next call opens a connection of its own
            made._request_signer._credentials = fresh[id(session)]


class _ResolvedAtNextUse:
    """A client's credentials after a restore: its session's, resolved at the first signing, then theirs
    (refreshable credentials go on refreshing themselves)."""

    def __init__(self, session: Any) -> None:
        self._session = session
        self._found: Any = None
        self._lock = threading.Lock()

    def _resolved(self) -> Any:
        with self._lock:
            if self._found is None:
                self._found = self._session.get_credentials()
                if self._found is None:
                    from botocore.exceptions import NoCredentialsError

                    raise NoCredentialsError()
            return self._found

    def get_frozen_credentials(self) -> Any:
        return self._resolved().get_frozen_credentials()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._resolved(), name)
