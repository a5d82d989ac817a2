"""Count the CPU instructions of a fresh Python process under valgrind's callgrind: cold-start figures
that the machine's load does not move (tests/integration/test_instruction_budgets.py, bench/run.py).

    from tests.support.instructions import count
    count("import json", {"AWS_REGION": "us-east-1"}).instructions   # Ir, callgrind's `Collected :`

The process runs `python -c CODE` twice: once natively, which compiles the bytecode of whatever it
imports (as a deployed package ships it) and must succeed, then under
`valgrind --tool=callgrind --callgrind-out-file=/dev/null`, whose total is the count. Its environment
is fixed, not inherited: `PATH`, `LANG`, `HOME` (a directory that does not exist: no `~/.aws`, no user
site), `PYTHONHASHSEED=0`, and what the caller adds; so a count depends on the code and its inputs
alone. Callgrind runs about 50 times slower than the machine.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
VALGRIND = "valgrind"
COLLECTED = re.compile(r"^==\d+== Collected : (\d+)$", re.MULTILINE)
BASE_ENV = {"LANG": "C.UTF-8", "HOME": "/nonexistent", "PYTHONHASHSEED": "0"}
"""What every counted process gets (with `PATH`); `PYTHONDONTWRITEBYTECODE` is never passed on."""


class CountError(RuntimeError):
    """The counted process failed, or callgrind printed no total."""


@dataclass(frozen=True)
class Count:
    """One counted process: its instructions, and what it printed (the counted run's stdout)."""

    instructions: int
    stdout: str


def available() -> bool:
    """Whether valgrind is on the PATH (./scripts/test installs it)."""
    return shutil.which(VALGRIND) is not None


def fixed_env(extra: Mapping[str, str]) -> dict[str, str]:
    """The counted process's whole environment: `BASE_ENV`, `PATH` and `extra`."""
    return {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), **BASE_ENV, **extra}


def count(
    code: str,
    env: Mapping[str, str],
    *,
    stdin: str | None = None,
    cwd: Path = ROOT,
    python: str = sys.executable,
) -> Count:
    """The instructions of `python -c code` in a fresh process (environment: `fixed_env(env)`), counted
    after a native run of the same has compiled its bytecode. Raises `CountError` if either run fails."""
    environ = fixed_env(env)
    args = [python, "-c", code]
    _run(args, environ, stdin, cwd)  # compiles what it imports: the counted run only reads .pyc files
    done = _run([VALGRIND, "--tool=callgrind", "--callgrind-out-file=/dev/null", *args], environ, stdin, cwd)
    found = COLLECTED.search(done.stderr)
    if found is None:
        raise CountError(f"callgrind printed no total:\n{done.stderr[-2000:]}")
    return Count(int(found.group(1)), done.stdout)


def count_all(cases: Mapping[str, tuple[str, Mapping[str, str]]], workers: int = 2) -> dict[str, Count]:
    """`count(code, env)` for every case {name: (code, env)}, `workers` at a time (counts ignore load)."""
    with ThreadPoolExecutor(max_workers=workers) as pool:
        futures = {name: pool.submit(count, code, env) for name, (code, env) in cases.items()}
        return {name: future.result() for name, future in futures.items()}


def _run(args: list[str], env: dict[str, str], stdin: str | None, cwd: Path) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(args, env=env, cwd=cwd, input=stdin, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise CountError(f"{args[0]} exited {done.returncode}:\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}")
    return done
