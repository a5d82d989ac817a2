"""Run `lambda-mcp` as a user does, a subprocess of the test environment's console script, and check a
failure is one line on stderr with the documented exit status."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from .processes import ROOT

CLI = Path(sys.executable).parent / "lambda-mcp"


def run(*args: str, stdin: str = "", env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(CLI), *args],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=90,
        cwd=ROOT,
        env={**os.environ, **(env or {})},
    )


def one_line_failure(done: subprocess.CompletedProcess[str], status: int) -> str:
    """The failure's stderr, after checking it is one line, no traceback, and the exit status."""
    assert done.returncode == status, (done.returncode, done.stdout, done.stderr)
    assert len(done.stderr.strip().splitlines()) == 1 and "Traceback" not in done.stderr, done.stderr
    return done.stderr.strip()
