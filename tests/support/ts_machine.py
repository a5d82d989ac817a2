"""Run the official TypeScript MCP client (v2) as a machine client (tests/support/ts_machine_client.mjs)
against an MCP server and return its report (the agent's keys: tests/support/agent_keys.py)."""

from __future__ import annotations

import json
import shutil
import subprocess
from typing import Any

import pytest

from .processes import ROOT
from .upstream import NODE

TS_CLIENT = ROOT / ".cache/ts-client"
SCRIPT = ROOT / "tests/support/ts_machine_client.mjs"
ERAS = ("2025-11-25", "2026-07-28")
"""The protocol revisions the script can speak: legacy (`initialize`) and modern (`server/discover`)."""


def run_machine_client(mode: str, config: dict[str, Any], timeout: float = 60) -> dict[str, Any]:
    """The script's report for `mode` (`cc`, `idjag` or `dpop`) with `config` (see the script); a failure
    of the script fails the test with what it said."""
    finished, lines = _run(mode, config, timeout)
    if finished.returncode == 0 and lines and "report" in lines[-1]:
        return dict(lines[-1]["report"])
    raise AssertionError(
        f"the TypeScript client failed ({finished.returncode}): {lines or finished.stdout[-3000:]} "
        f"{finished.stderr[-3000:]}"
    )


def _run(
    mode: str, config: dict[str, Any], timeout: float
) -> tuple[subprocess.CompletedProcess[str], list[dict[str, Any]]]:
    """Run the script with the harness's Node 22 from .cache/ts-client, where ESM resolves the client (the
    script is copied there); killed after `timeout` seconds. Its result and its JSON lines."""
    if not NODE.exists() or not (TS_CLIENT / "node_modules/@modelcontextprotocol/client").exists():
        pytest.fail(
            "the TypeScript MCP client is not installed: run ./scripts/test (it installs it into .cache/ts-client)"
        )
    shutil.copy(SCRIPT, TS_CLIENT / SCRIPT.name)
    try:
        finished = subprocess.run(
            [str(NODE), SCRIPT.name, mode, json.dumps(config)],
            cwd=TS_CLIENT,
            capture_output=True,
            text=True,
            timeout=timeout,
        )
    except subprocess.TimeoutExpired as expired:
        raise AssertionError(f"the TypeScript client did not finish in {timeout} s: {expired.stdout!r}") from None
    lines = [json.loads(line) for line in finished.stdout.splitlines() if line.startswith("{")]
    return finished, lines
