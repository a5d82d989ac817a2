"""Lambda SnapStart's runtime hooks (template.yaml's `SnapStart=on`; docs/deploy.md, "SnapStart").

Each entrypoint calls `_kit.register_snapstart_hooks(__name__)` before it builds its kit. Where
`snapshot_restore_py` is importable (the Lambda Python runtimes 3.12+ include it; nothing installs it anywhere
else), that imports this module, which registers two hooks:

- before the snapshot, once the entrypoint's module ran (the app loaded, the kit built): the kit's AWS clients
  built (botocore, its service models and endpoint data, loaded into the snapshot), then, where the
  entrypoint serves HTTP (its module's `serve`: the Mangum handler inside the observer, so no log line and no
  metrics), one request served in memory: a 2026 `tools/list`, which reads and writes no state, opens no
  session and starts no task;
- after each restore, in the environment restored: `random` reseeded (its state is the snapshot's, the same in
  every environment restored from it), the AWS clients' pooled connections dropped and their credentials
  resolved again at their next call (`storage.aws_clients.renew`), and the outbound HTTP clients of tools
  forgotten (`server.outbound.http.forget_clients`). Nothing is fetched in the hook: what the first request
  needs (a connection, the credentials) it makes itself, and a request that needs no AWS pays nothing.

Registered before the app's module is imported, the kit's after-restore hook runs before any the app registers
(Lambda runs them in registration order) and its before-snapshot hook after theirs (reverse order). Where the
library is missing, this module is not even imported: the cold path pays one failed import (about 50 µs).
"""

from __future__ import annotations

import json
import logging
import random
import sys
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..kit import Kit

logger = logging.getLogger("lambda_mcp")
_PACKAGE = __name__.split(".")[0]
PRIMING_HOST = "snapstart.invalid"
"""The priming request's Host and API domain: a name no caller can have (RFC 6761's `.invalid`)."""


def register(entrypoint: str, library: Any) -> None:
    """Register the hooks with `library` (`snapshot_restore_py`) for the entrypoint module named `entrypoint`,
    whose `kit`, and `serve` if it serves HTTP, the before-snapshot hook reads once the module ran."""
    library.register_before_snapshot(before_snapshot, entrypoint)
    library.register_after_restore(after_restore)


def before_snapshot(entrypoint: str) -> None:
    """Build what the first requests of every restored environment would otherwise build, once, in the snapshot."""
    module = sys.modules[entrypoint]
    kit: Kit = module.kit
    build_clients(kit)
    serve = getattr(module, "serve", None)
    if serve is not None:
        prime(serve)


def after_restore() -> None:
    """Make the restored environment its own: what it shares with every other environment restored from the
    snapshot is renewed (a random seed, pooled connections, credentials)."""
    random.seed()  # from os.urandom, which the restored kernel serves its own entropy
    clients = sys.modules.get(f"{_PACKAGE}.storage.aws_clients")  # not imported: no client was built
    if clients is not None:
        clients.renew()
    outbound = sys.modules.get(f"{_PACKAGE}.server.outbound.http")  # importing it would cost the restore 1.5 ms
    if outbound is not None:
        outbound.forget_clients()


def build_clients(kit: Kit) -> None:
    """The kit's AWS clients, each built now rather than by its first call: the DynamoDB stores' (and the
    authorization facade's), the task queue's or the durable executions' (botocore loads their models now)."""
    from ..storage.dynamodb._client import LazyClient

    stores = kit.stores
    holders: list[Any] = [stores.sessions, stores.events, stores.tasks, stores.calls, stores.changes]
    if kit.facade is not None:
        holders.append(kit.facade.store)
    for holder in holders:
        for value in list(getattr(holder, "__dict__", {}).values()):
            if isinstance(value, LazyClient):
                value()  # an in-memory store holds none
    prepare = getattr(getattr(kit.task_runtime, "executor", None), "prepare", None)
    if prepare is not None:
        prepare()


def prime(serve: Callable[[dict[str, Any], Any], Any]) -> int:
    """Serve one 2026 `tools/list` through `serve` in memory, loading what a first request loads; its status
    (a token-checking auth mode refuses it at the check, having loaded the transport up to there)."""
    started = time.perf_counter()
    try:
        response = serve(priming_event(), _PrimingContext())
        status = int(response.get("statusCode", 0)) if isinstance(response, dict) else 0
    except Exception:  # a snapshot without the priming still serves: the first request loads the rest
        logger.warning("SnapStart: the priming request failed; the snapshot is taken without it", exc_info=True)
        return 0
    elapsed = (time.perf_counter() - started) * 1000
    logger.info("SnapStart: priming request answered %d in %.1f ms before the snapshot", status, elapsed)
    return status


def priming_event(path: str = "/mcp") -> dict[str, Any]:
    """An API Gateway HTTP API (payload 2.0) event carrying a 2026 `tools/list` to `path`."""
    from ..protocol.names import META_CAPABILITIES, META_VERSION
    from ..protocol.revisions import MODERN

    body = {
        "jsonrpc": "2.0",
        "id": 0,
        "method": "tools/list",
        "params": {"_meta": {META_VERSION: MODERN, META_CAPABILITIES: {}}},
    }
    now = time.time()
    return {
        "version": "2.0",
        "routeKey": f"ANY {path}",
        "rawPath": path,
        "rawQueryString": "",
        "headers": {
            "content-type": "application/json",
            "accept": "application/json, text/event-stream",
            "host": PRIMING_HOST,
            "user-agent": "lambda-mcp-snapstart-priming",
            "mcp-protocol-version": MODERN,
            "mcp-method": "tools/list",
        },
        "requestContext": {
            "accountId": "anonymous",
            "apiId": "snapstart",
            "domainName": PRIMING_HOST,
            "domainPrefix": "snapstart",
            "http": {
                "method": "POST",
                "path": path,
                "protocol": "HTTP/1.1",
                "sourceIp": "127.0.0.1",
                "userAgent": "lambda-mcp-snapstart-priming",
            },
            "requestId": "snapstart-priming",
            "routeKey": f"ANY {path}",
            "stage": "$default",
            "time": time.strftime("%d/%b/%Y:%H:%M:%S +0000", time.gmtime(now)),
            "timeEpoch": int(now * 1000),
        },
        "isBase64Encoded": False,
        "body": json.dumps(body),
    }


class _PrimingContext:
    """The Lambda context the priming request is served with (a whole buffered request's time left)."""

    aws_request_id = "snapstart-priming"
    function_name = "snapstart-priming"
    function_version = "$LATEST"
    invoked_function_arn = "arn:aws:lambda:us-east-1:000000000000:function:snapstart-priming"
    memory_limit_in_mb = 1024
    log_group_name = "/aws/lambda/snapstart-priming"
    log_stream_name = "snapstart-priming"

    def get_remaining_time_in_millis(self) -> int:
        return 29_000
