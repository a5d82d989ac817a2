"""infra/smoke.py, the post-deploy check, run against `lambda-mcp dev --lambda` (the real handler) on 127.0.0.1."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.support.processes import ROOT, free_port, lambda_mcp_dev


def _smoke(url: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(ROOT / "infra/smoke.py"), url], capture_output=True, text=True, timeout=60
    )


def test_the_smoke_test_passes_on_both_eras_through_the_lambda_handler(tmp_path: Path) -> None:
    server = lambda_mcp_dev("examples/weather/server.py", through_lambda=True, log=tmp_path / "server.log")
    try:
        done = _smoke(server.url)
    finally:
        server.stop()
    print(done.stdout)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "server/discover: weather" in done.stdout
    assert "the session now answers 404" in done.stdout


def test_the_smoke_test_fails_when_nothing_answers() -> None:
    done = _smoke(f"http://127.0.0.1:{free_port()}/mcp")
    assert done.returncode == 1 and done.stdout.startswith("FAIL")
