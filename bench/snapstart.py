"""Restore-to-first-answer under an emulated SnapStart restore, beside the plain cold start (issue 40).

Prints figures; it is not a test. The deployed shape of bench/run.py's headline (state in DynamoDB, Powertools
logs and metrics on, the one-tool app of bench/apps/lambda_mcp_app.py, API Gateway v2 events), two ways:

* cold: a fresh process imports the HTTP entrypoint, then answers a 2026 `tools/call` and a legacy
  `initialize` (one PutItem);
* restored: a process imports the entrypoint with a stand-in `snapshot_restore_py` on the path (the kit
  registers its hooks), runs the before-snapshot hooks (the clients built, one priming request), forks
  twice, and each child, a restored environment, runs the after-restore hooks and answers the same two
  requests (tests/support/snapstart_emulation.py, which tests/integration/test_snapstart.py also runs).

Both are timed in the process: cold from before the import, restored from the start of the after-restore
hooks (the fork stands for Lambda's restore, whose own duration, the microVM's resume, is not emulated:
Lambda reports it as `Restore Duration`). A fork's children fault in the pages they write (copy on write),
about what a restored microVM pays to page its memory in. Medians over --runs rounds.

Usage: python bench/snapstart.py [--runs N]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
REPO = BENCH.parent
TABLE = "bench-state"  # the table bench/run.py makes


@contextlib.contextmanager
def local_dynamodb() -> Any:
    """(engine, endpoint) of a local DynamoDB with the state table made (bench/run.py's: DynamoDB Local, else moto)."""
    sys.path.insert(0, str(BENCH))
    import run

    with run.local_dynamodb() as (engine, endpoint, _client):
        yield engine, endpoint


def environment(endpoint: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("LAMBDA_MCP_", "AWS_"))}
    return env | {
        "LAMBDA_MCP_APP": str(BENCH / "apps/lambda_mcp_app.py") + ":app",
        "LAMBDA_MCP_AUTH": "none",
        "LAMBDA_MCP_TABLE_NAME": TABLE,
        "LAMBDA_MCP_TASK_QUEUE_URL": "http://127.0.0.1:9/000000000000/bench-tasks",  # built, never called
        "AWS_ENDPOINT_URL": endpoint,
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        "AWS_DEFAULT_REGION": "us-east-1",
        "AWS_REGION": "us-east-1",
        "AWS_LAMBDA_FUNCTION_NAME": "bench",
        "POWERTOOLS_SERVICE_NAME": "bench",
        "PYTHONPATH": os.pathsep.join([str(REPO / "tests/support/snapstart_runtime"), str(REPO / "src")]),
    }


def emulate(env: dict[str, str], *mode: str) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as folder:
        out = Path(folder) / "out.json"
        command = [sys.executable, "-m", "tests.support.snapstart_emulation", str(out), *mode]
        done = subprocess.run(command, env=env, cwd=REPO, capture_output=True, text=True, timeout=300)
        if done.returncode != 0:
            raise SystemExit(f"{' '.join(command)} failed:\n{done.stdout[-2000:]}\n{done.stderr[-4000:]}")
        report: dict[str, Any] = json.loads(out.read_text())
    for child in report.get("children", []):
        if "error" in child or child.get("answer") != [{"type": "text", "text": "3"}]:
            raise SystemExit(f"a restored child failed: {child}")
    return report


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5, help="rounds (each: one cold process, one snapshot, 2 restores)")
    args = parser.parse_args()
    cold: list[dict[str, Any]] = []
    restored: list[dict[str, Any]] = []
    snapshots: list[dict[str, Any]] = []
    with local_dynamodb() as (engine, endpoint):
        env = environment(endpoint)
        emulate(env, "--cold")  # untimed: the first run compiles and caches what the others read
        for _ in range(args.runs):
            cold.append(emulate(env, "--cold"))
            report = emulate(env)
            snapshots.append(report["init"])
            restored.extend(report["children"])

    def median(rows: list[dict[str, Any]], key: str) -> str:
        return f"{statistics.median(row[key] for row in rows):7.1f} ms"

    print(f"SnapStart, emulated (fork after the before-snapshot hooks); state in {engine}; medians of {args.runs} runs")
    print(f"  init before the snapshot (import + clients + priming): {median(snapshots, 'snapshot_ms')}")
    print(f"  {'':38} {'cold start':>10} {'restored':>10}")
    rows = (
        ("import (cold), after-restore hooks", "imported_ms", "hooks_ms"),
        ("-> first 2026 tools/call answered", "first_answer_ms", "first_answer_ms"),
        ("-> first legacy initialize (PutItem)", "first_initialize_ms", "first_initialize_ms"),
    )
    for label, cold_key, restored_key in rows:
        print(f"  {label:38} {median(cold, cold_key):>10} {median(restored, restored_key):>10}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
