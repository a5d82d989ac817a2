"""SnapStart's runtime hooks (issue 40), tested by emulating a snapshot and its restores: the HTTP entrypoint is
imported with DynamoDB configured against a real local endpoint (moto server; DynamoDB Local, which keeps its
connections alive, for the connections), with a stand-in `snapshot_restore_py` on the path; the before-snapshot
hooks run, then the process forks twice and each child, a restored environment, runs the after-restore hooks and
serves its first requests (tests/support/snapstart_emulation.py). The two children mint different ids, share no
connection and sign with their own credentials, and the priming request left the table empty. Restore-to-first-
answer is printed beside the plain cold start. Without the library (anywhere but Lambda) the cost is one failed
import."""

from __future__ import annotations

import json
import os
import secrets
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from tests.support.processes import ROOT

STAND_IN = ROOT / "tests/support/snapstart_runtime"
APP = '''\
from lambda_mcp import MCPApp

app = MCPApp("trivial", version="1.0.0")


@app.tool()
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b
'''
ANSWER = [{"type": "text", "text": "3"}]
pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="the restores are emulated with os.fork")


@contextmanager
def _deployment(url: str, tmp_path: Path) -> Iterator[tuple[dict[str, str], Any, str]]:
    """The HTTP function's environment as template.yaml sets it (a fresh state table, a task queue that is never
    called) on the endpoint `url`; a client of that table, and its name."""
    import boto3

    from lambda_mcp.storage.dynamodb import create_table

    table = f"snapstart-{secrets.token_hex(4)}"
    dynamodb = boto3.client("dynamodb", endpoint_url=url)
    create_table(dynamodb, table)
    (tmp_path / "trivial.py").write_text(APP)
    environ = {k: v for k, v in os.environ.items() if not k.startswith("LAMBDA_MCP_")}
    try:
        yield (
            environ
            | {
                "LAMBDA_MCP_APP": str(tmp_path / "trivial.py"),
                "LAMBDA_MCP_AUTH": "none",
                "LAMBDA_MCP_TABLE_NAME": table,
                "LAMBDA_MCP_TASK_QUEUE_URL": "http://127.0.0.1:9/000000000000/snapstart-tasks",
                "AWS_ENDPOINT_URL": url,
                "POWERTOOLS_SERVICE_NAME": "snapstart",
                "PYTHONPATH": str(STAND_IN),
            },
            dynamodb,
            table,
        )
    finally:
        dynamodb.delete_table(TableName=table)


@pytest.fixture(params=["moto-server", "dynamodb-local"])
def deployed(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[dict[str, str], Any, str]]:
    url = request.getfixturevalue("moto_server_url" if request.param == "moto-server" else "dynamodb_local_url")
    with _deployment(url, tmp_path) as deployment:
        yield deployment


def _emulate(env: dict[str, str], tmp_path: Path, *mode: str) -> tuple[dict[str, Any], str]:
    out = tmp_path / f"emulation{''.join(mode)}.json"
    command = [sys.executable, "-m", "tests.support.snapstart_emulation", str(out), *mode]
    done = subprocess.run(command, env=env, cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-4000:]
    report: dict[str, Any] = json.loads(out.read_text())
    for child in report.get("children", []):
        assert "error" not in child, child
    return report, done.stdout


def test_two_restores_mint_their_own_ids_share_no_connection_and_the_priming_wrote_nothing(
    deployed: tuple[dict[str, str], Any, str], tmp_path: Path
) -> None:
    env, dynamodb, table = deployed
    report, logs = _emulate(env, tmp_path)
    init, children = report["init"], report["children"]
    assert init["registered"] == [1, 1]  # one before-snapshot and one after-restore hook
    # Before the snapshot: every client the HTTP function uses is built, and one request primed the handler...
    assert init["clients"] == ["dynamodb"] * 5 + ["sqs"]  # the five stores' and the task queue's
    assert "SnapStart: priming request answered 200" in logs
    # ...which wrote nothing: no session, no task, no call record, no change
    assert init["items_after_priming"] == []
    assert init["threads"] == ["MainThread"]  # nothing a fork would lose (a restored VM keeps its threads)
    one, two = children
    for index, child in enumerate(children, start=1):
        assert child["answer"] == ANSWER
        assert child["pools_after_restore"] == 0  # the snapshot's pools dropped before the first request
        assert child["outbound_clients_after_restore"] == 0  # and the tools' HTTP client
        assert child["signed_with"] == [f"RESTORED{index}"]  # the environment's credentials, not the snapshot's
        assert not set(child["ports"]) & set(init["ports"])  # a connection of its own, not the snapshot's
    assert one["pid"] != two["pid"]
    assert one["random"] != two["random"]  # reseeded: one snapshot's Mersenne Twister would repeat itself
    assert one["session_id"] != two["session_id"] and one["token"] != two["token"]
    assert not set(one["ports"]) & set(two["ports"])
    items = dynamodb.scan(TableName=table)["Items"]  # the children's two sessions, and nothing else
    assert sorted(item["pk"]["S"] for item in items) == sorted(f"SESSION#{c['session_id']}" for c in children)
    cold, _ = _emulate(env, tmp_path, "--cold")
    print(
        f"\nrestore -> first 2026 tools/call answered: {one['first_answer_ms']:.1f} / {two['first_answer_ms']:.1f} ms"
        f" (after-restore hooks {one['hooks_ms']:.1f} / {two['hooks_ms']:.1f} ms); plain cold start, import + first"
        f" answer: {cold['first_answer_ms']:.1f} ms (import {cold['imported_ms']:.1f} ms)"
        f"\nrestore -> first legacy initialize (one PutItem): {one['first_initialize_ms']:.1f} /"
        f" {two['first_initialize_ms']:.1f} ms; plain cold start: {cold['first_initialize_ms']:.1f} ms"
    )


def test_without_the_kit_s_hook_the_restores_would_share_the_snapshot_s_connection_credentials_and_seed(
    dynamodb_local_url: str, tmp_path: Path
) -> None:
    """The control, on DynamoDB Local, which keeps connections alive (moto server closes each one): the snapshot
    holds a live pooled connection, and without the kit's after-restore hook both restored environments send on
    it, sign with the snapshot's credentials and draw the same "random" numbers."""
    with _deployment(dynamodb_local_url, tmp_path) as (env, _, _):
        report, _ = _emulate(env | {"WITHOUT_KIT_HOOKS": "1"}, tmp_path)
    init, (one, two) = report["init"], report["children"]
    assert init["ports"]  # a pooled, live connection in the snapshot
    assert set(one["ports"]) == set(two["ports"]) == set(init["ports"])  # the snapshot's connection, shared
    assert one["signed_with"] == two["signed_with"] == ["testing"]  # the snapshot's credentials
    assert one["random"] == two["random"]


def test_the_task_worker_builds_its_clients_before_the_snapshot_and_renews_them_after(
    moto_server_url: str, tmp_path: Path
) -> None:
    with _deployment(moto_server_url, tmp_path) as (env, _, _):
        report, logs = _emulate(env, tmp_path, "--worker")
    assert report["registered"] == [1, 1]
    assert report["clients"] == ["dynamodb"] * 5 + ["sqs"]
    assert report["pools_after_restore"] == 0
    assert "priming" not in logs  # a task run needs a task: the worker is not primed


def test_without_the_runtime_library_registering_costs_one_failed_import_and_loads_nothing() -> None:
    probe = (
        "import sys, time\n"
        "from lambda_mcp.entrypoints import _kit\n"
        "before = set(sys.modules)\n"
        "started = time.perf_counter()\n"
        "registered = _kit.register_snapstart_hooks('probe')\n"
        "elapsed = (time.perf_counter() - started) * 1e6\n"
        "print(registered, sorted(set(sys.modules) - before), round(elapsed))\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}  # no stand-in: as anywhere but Lambda
    done = subprocess.run([sys.executable, "-c", probe], env=env, cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("False [] "), done.stdout  # nothing registered, no module loaded (not _snapstart)
    print(f"\nregister() without snapshot_restore_py: {done.stdout.split()[-1]} µs (one failed import)")
