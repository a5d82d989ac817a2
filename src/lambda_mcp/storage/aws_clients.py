"""Build the kit's AWS clients (DynamoDB state, the SQS task queue) on one botocore session per process.

Only called when a request first needs AWS, never at import: a request that touches no storage loads
none of botocore's client machinery. The client is botocore's own (boto3's clients are these), built
on a botocore session rather than through boto3, whose import adds about 20 ms to the first storage
call and nothing a client uses. One session for every client of the process, so the service model and
endpoint data it loads once are reused by the next client (each store builds its own).
"""

from __future__ import annotations

import functools
import os
import threading
from collections.abc import Mapping, Sequence
from typing import Any

_lock = threading.Lock()


def client(service: str, **config: Any) -> Any:
    """A botocore client for `service` (region, endpoint and credentials from the environment, as boto3's
    would be), with `config` as its `botocore.config.Config` options."""
    from botocore.config import Config

    with _lock:  # a botocore session is not thread-safe: build one client at a time
        return _session().create_client(service, config=Config(**config))


def _session() -> Any:
    """The process's session; a new one if botocore's built-in handlers changed since (a test library such
    as moto adds one when imported, and boto3 would build its next default session with it too)."""
    from botocore.handlers import BUILTIN_HANDLERS

    return _session_with(len(BUILTIN_HANDLERS))


@functools.cache
def _session_with(handlers: int) -> Any:
    import botocore.session

    session = botocore.session.get_session()
    data_path = session.get_config_variable("data_path")  # AWS_DATA_PATH, as botocore's own loader reads it
    paths = (
        None if data_path is None else [os.path.expanduser(os.path.expandvars(p)) for p in data_path.split(os.pathsep)]
    )
    session.register_component("data_loader", _loader_class()(extra_search_paths=paths))
    if static := environment_credentials(os.environ):
        session.set_credentials(**static)  # what botocore's chain would find first, without building the chain
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
