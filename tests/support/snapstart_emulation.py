"""A SnapStart snapshot and two restores, emulated in one process: `python -m tests.support.snapstart_emulation
OUT.json [--cold | --worker]` (with LAMBDA_MCP_* set for a DynamoDB table, and tests/support/snapstart_runtime on
PYTHONPATH).

The init phase imports the HTTP entrypoint (which registers the kit's hooks with the stand-in library), runs the
before-snapshot hooks, then reads the table through a kit client (the priming left it empty; the read leaves a
pooled connection in the "snapshot", as an app's own init code could) and opens an outbound HTTP client. The
snapshot is the process at that point: it forks, one child after the other, and each child is a restored
environment with credentials of its own (as Lambda gives one): it runs the after-restore hooks, then serves a 2026
`tools/call` through the deployed handler (the first answer) and a legacy `initialize` (a session written to
DynamoDB). Each reports what it minted and which connections it used; OUT.json gets the init's facts and the two
children's reports.
Children run one at a time: a forked process shares its parent's epoll and wake-up pipe, which a real restore
(a VM of its own) never shares, and no thread may exist at the fork (a restored VM keeps its threads, a fork
does not), and each child first puts back the parent's `random` state, which `random` reseeds in a forked
child but a restore keeps. With WITHOUT_KIT_HOOKS=1 in the environment the kit's after-restore hook is dropped
before the fork: what the children would share without it.

`--cold` is the plain cold start to compare with: import the entrypoint, then the same two requests. `--worker`
imports the task worker's entrypoint and runs its before-snapshot and after-restore hooks in place.
"""

from __future__ import annotations

import json
import os
import random
import secrets
import sys
import threading
import time
from pathlib import Path
from typing import Any

from tests.support.processes import ROOT

TOOLS_CALL = ROOT / "events/http-api-v2/modern_tools_call.json"
INITIALIZE = ROOT / "events/http-api-v2/initialize.json"


class Context:
    aws_request_id = "restored-request"
    function_name = "snapstart"
    function_version = "1"
    invoked_function_arn = "arn:aws:lambda:us-east-1:123456789012:function:snapstart:live"
    memory_limit_in_mb = 1024
    log_group_name = "/aws/lambda/snapstart"
    log_stream_name = "snapstart"

    def get_remaining_time_in_millis(self) -> int:
        return 29_000


def tools_call() -> dict[str, Any]:
    event: dict[str, Any] = json.loads(TOOLS_CALL.read_text())
    body = json.loads(event["body"])
    body["params"] |= {"name": "add", "arguments": {"a": 1, "b": 2}}
    event["body"] = json.dumps(body)
    event["headers"]["mcp-name"] = "add"
    return event


def kit_clients() -> list[Any]:
    from lambda_mcp.storage import aws_clients

    return list(aws_clients._made)


def local_ports(client: Any) -> list[int]:
    """The local ports of the connections pooled by a botocore client (idle ones, between calls)."""
    manager = client._endpoint.http_session._manager
    ports = []
    for key in list(manager.pools.keys()):
        pool = manager.pools.get(key)
        for connection in list(pool.pool.queue) if pool is not None and pool.pool is not None else []:
            if connection is not None and connection.sock is not None:
                ports.append(connection.sock.getsockname()[1])
    return ports


def pools(client: Any) -> int:
    """How many connection pools a botocore client holds (one per endpoint it called since its pools were new)."""
    return len(client._endpoint.http_session._manager.pools)


def restored(entry: Any, index: int) -> dict[str, Any]:
    """In a child: the after-restore hooks, then the first requests, with what they show."""
    import snapshot_restore_py

    from lambda_mcp.server.outbound import http as outbound

    started = time.perf_counter()
    os.environ["AWS_ACCESS_KEY_ID"] = f"RESTORED{index}"  # this environment's own credentials
    snapshot_restore_py.run_after_restore()
    hooks_ms = (time.perf_counter() - started) * 1000
    pools_after_restore = sum(pools(c) for c in kit_clients())
    signed: list[str] = []

    def capture(request: Any, **_: Any) -> None:
        signed.append(str(request.headers.get("Authorization", b""), "utf-8", "replace"))

    for made in kit_clients():
        made.meta.events.register("before-send", capture)
    answer = entry.handler(tools_call(), Context())
    first_answer_ms = (time.perf_counter() - started) * 1000
    assert answer["statusCode"] == 200, answer
    opened = entry.handler(json.loads(INITIALIZE.read_text()), Context())
    initialized_ms = (time.perf_counter() - started) * 1000
    assert opened["statusCode"] == 200, opened
    headers = {k.lower(): v for k, v in opened["headers"].items()}
    return {
        "pid": os.getpid(),
        "hooks_ms": hooks_ms,
        "first_answer_ms": first_answer_ms,
        "first_initialize_ms": initialized_ms,
        "answer": json.loads(answer["body"])["result"]["content"],
        "random": random.random(),
        "token": secrets.token_hex(8),
        "session_id": headers.get("mcp-session-id"),
        "pools_after_restore": pools_after_restore,
        "ports": sorted(p for c in kit_clients() for p in local_ports(c)),
        "signed_with": sorted({s.split("Credential=")[1].split("/")[0] for s in signed if "Credential=" in s}),
        "outbound_clients_after_restore": len(outbound._clients),
    }


def main(out: Path) -> int:
    import snapshot_restore_py

    started = time.perf_counter()
    import lambda_mcp.entrypoints.http as entry

    imported_ms = (time.perf_counter() - started) * 1000
    registered = (len(snapshot_restore_py.before_snapshot), len(snapshot_restore_py.after_restore))
    snapshot_restore_py.run_before_snapshot()
    if os.environ.get("WITHOUT_KIT_HOOKS") == "1":
        snapshot_restore_py.after_restore.clear()
    snapshot_ms = (time.perf_counter() - started) * 1000
    table = os.environ["LAMBDA_MCP_TABLE_NAME"]
    clients = kit_clients()
    dynamodb = [c for c in clients if c.meta.service_model.service_name == "dynamodb"]
    items = dynamodb[0].scan(TableName=table)["Items"]  # what the priming left: read before anything else writes
    from lambda_mcp.runloop import run
    from lambda_mcp.server.outbound import http as outbound

    async def open_outbound() -> int:
        return id(outbound.client())

    outbound_client = run(open_outbound())
    init = {
        "imported_ms": imported_ms,
        "snapshot_ms": snapshot_ms,
        "registered": registered,
        "clients": sorted(c.meta.service_model.service_name for c in clients),
        "items_after_priming": items,
        "ports": sorted(p for c in clients for p in local_ports(c)),
        "pools": sum(pools(c) for c in clients),
        "random": random.random(),
        "threads": [t.name for t in threading.enumerate()],
        "outbound_client": outbound_client,
    }
    children = []
    if len(init["threads"]) == 1:
        for index in (1, 2):
            children.append(_fork(entry, index))
    out.write_text(json.dumps({"init": init, "children": children}))
    return 0


def cold(out: Path) -> int:
    """The plain cold start: import the entrypoint, then the first answer and the first `initialize`."""
    started = time.perf_counter()
    import lambda_mcp.entrypoints.http as entry

    imported_ms = (time.perf_counter() - started) * 1000
    answer = entry.handler(tools_call(), Context())
    first_answer_ms = (time.perf_counter() - started) * 1000
    opened = entry.handler(json.loads(INITIALIZE.read_text()), Context())
    initialized_ms = (time.perf_counter() - started) * 1000
    assert answer["statusCode"] == 200 and opened["statusCode"] == 200, (answer, opened)
    report = {"imported_ms": imported_ms, "first_answer_ms": first_answer_ms, "first_initialize_ms": initialized_ms}
    out.write_text(json.dumps(report))
    return 0


def worker(out: Path) -> int:
    """The task worker's hooks: its clients built before the snapshot (no priming request), renewed after."""
    import snapshot_restore_py

    import lambda_mcp.entrypoints.worker  # noqa: F401 (registers the hooks)

    registered = (len(snapshot_restore_py.before_snapshot), len(snapshot_restore_py.after_restore))
    snapshot_restore_py.run_before_snapshot()
    built = sorted(c.meta.service_model.service_name for c in kit_clients())
    snapshot_restore_py.run_after_restore()
    report = {"registered": registered, "clients": built, "pools_after_restore": sum(pools(c) for c in kit_clients())}
    out.write_text(json.dumps(report))
    return 0


def _fork(entry: Any, index: int) -> dict[str, Any]:
    read, write = os.pipe()
    snapshot = random.getstate()
    pid = os.fork()
    if pid == 0:  # the restored environment
        os.close(read)
        random.setstate(snapshot)  # `random` reseeds itself in a forked child; a restored VM has the snapshot's
        try:
            report: dict[str, Any] = restored(entry, index)
        except BaseException as exc:  # reported to the parent, which fails the test with it
            report = {"error": f"{type(exc).__name__}: {exc}"}
        with os.fdopen(write, "w") as pipe:
            pipe.write(json.dumps(report))
        os._exit(0)
    os.close(write)
    with os.fdopen(read) as pipe:
        text = pipe.read()
    os.waitpid(pid, 0)
    found: dict[str, Any] = json.loads(text)
    return found


if __name__ == "__main__":
    mode = {"--cold": cold, "--worker": worker}.get(sys.argv[2] if len(sys.argv) > 2 else "", main)
    sys.exit(mode(Path(sys.argv[1])))
