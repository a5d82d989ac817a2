"""`lambda-mcp smoke`, the post-deploy check (in the wheel; infra/smoke.py runs the same code), run against
`lambda-mcp dev` on 127.0.0.1: through the real Lambda handler (buffered, as Transport=buffered deploys it) and
on the streaming server (as Transport=streaming serves it); and against `lambda-mcp serve` outside Lambda, at
its own banner URL."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.processes import ROOT, ServerProcess, free_port, lambda_mcp_dev

LAMBDA_MCP = str(Path(sys.executable).with_name("lambda-mcp"))

# A tool that reports progress at once, then works 1.5 s (tests/apps/streamed.py): streamed, the progress event
# arrives about 1.5 s before the result; buffered, with it.
SLOW_PROGRESS = ["--stream-tool", "progress_then_work", "--stream-arguments", '{"seconds": 1.5}', "--min-lead", "1"]


def _smoke(url: str, *extra: str, script: bool = False) -> subprocess.CompletedProcess[str]:
    """`lambda-mcp smoke URL ...` (`script`: `python infra/smoke.py URL ...`, as written before it shipped)."""
    command = [sys.executable, str(ROOT / "infra/smoke.py")] if script else [LAMBDA_MCP, "smoke"]
    return subprocess.run([*command, url, *extra], capture_output=True, text=True, timeout=60)


def test_the_smoke_test_passes_on_both_eras_through_the_lambda_handler(tmp_path: Path) -> None:
    server = lambda_mcp_dev("examples/weather/server.py", through_lambda=True, log=tmp_path / "server.log")
    try:
        done = _smoke(server.url, "--stream")  # the weather example's packing_list reports progress
        # A progress event that must lead the result by 0.5 s: a buffered answer delivers them together.
        buffered = _smoke(server.url, "--stream", "--min-lead", "0.5")
    finally:
        server.stop()
    print(done.stdout)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "server/discover: weather" in done.stdout
    assert "the session now answers 404" in done.stdout
    for era in ("2026-07-28", "2025-11-25"):
        assert f"ok  {era} streaming tools/call packing_list: first progress after" in done.stdout
    assert buffered.returncode == 1, buffered.stdout
    assert "FAIL 2026-07-28 tools/call packing_list" in buffered.stdout
    assert "progress came less than 0.5 s before" in buffered.stdout


def test_the_streaming_check_times_the_first_progress_event_on_the_streaming_server(tmp_path: Path) -> None:
    server = lambda_mcp_dev("tests/apps/streamed.py", through_lambda=False, log=tmp_path / "server.log")
    try:
        done = _smoke(server.url, "--stream", *SLOW_PROGRESS)
    finally:
        server.stop()
    print(done.stdout)
    assert done.returncode == 0, done.stdout + done.stderr
    for era in ("2026-07-28", "2025-11-25"):
        (line,) = [line for line in done.stdout.splitlines() if line.startswith(f"ok  {era} streaming tools/call")]
        assert "chunked (no Content-Length)" in line
        first, result = (float(part.split(" after ")[1].removesuffix(" s")) for part in line.split(", ")[:2])
        assert result - first >= 1.0  # what --min-lead 1 checked, read back from what it printed


def test_the_smoke_test_fails_when_nothing_answers() -> None:
    for script in (False, True):
        done = _smoke(f"http://127.0.0.1:{free_port()}/mcp", script=script)
        assert done.returncode == 1 and done.stdout.startswith("FAIL")


def test_the_smoke_test_passes_against_serve_at_its_own_url(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`lambda-mcp serve` outside Lambda, with no LAMBDA_MCP_ALLOWED_HOSTS: the URL it prints is the one to use."""
    for name in [n for n in os.environ if n.startswith(("LAMBDA_MCP_", "AWS_LAMBDA_", "AWS_LWA_"))]:
        monkeypatch.delenv(name)
    port = free_port()
    args = [LAMBDA_MCP, "serve", "tests/apps/streamed.py", "--port", str(port)]
    server = ServerProcess(args, port, {"LAMBDA_MCP_AUTH": "none"}, log=tmp_path / "serve.log")
    try:
        done = _smoke(server.url, "--stream", *SLOW_PROGRESS, script=True)
    finally:
        server.stop()
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"http://127.0.0.1:{port}/mcp" in server.log_text()  # the banner's URL, the one smoke-tested
