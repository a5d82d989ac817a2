"""What the build tests share: where the builds are, the offline pip environment, and the ELF check."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import tomllib
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.support.processes import ROOT

EM_AARCH64 = 183
BUILDS = ROOT / "src/lambda_mcp/scaffold/project/builds"
LOCK = BUILDS / "deps/requirements.lock"
DURABLE_LOCK = BUILDS / "durable/requirements.lock"
WHEELS = ROOT / ".cache/layer-wheels"
VERSION = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
WHEEL = f"lambda_mcp-{VERSION}-py3-none-any.whl"
"""The kit's wheel, as `python -m build` names it."""
FAKE_AWS = {
    "AWS_ACCESS_KEY_ID": "testing",
    "AWS_SECRET_ACCESS_KEY": "testing",
    "AWS_SESSION_TOKEN": "testing",
    "AWS_REGION": "us-east-1",
    "AWS_DEFAULT_REGION": "us-east-1",
}


def clean_env(env: dict[str, str]) -> dict[str, str]:
    """`env` with nothing of the checkout importable (no PYTHONPATH, no active venv, no checkout on PATH),
    fake AWS credentials, and quiet pip and SAM CLI."""
    env = {k: v for k, v in env.items() if k not in {"PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV"}}
    env["PATH"] = os.pathsep.join(p for p in env["PATH"].split(os.pathsep) if not p.startswith(str(ROOT)))
    return {**env, **FAKE_AWS, "PIP_DISABLE_PIP_VERSION_CHECK": "1", "SAM_CLI_TELEMETRY": "0"}


@dataclass(frozen=True)
class Installed:
    """The kit as a user meets it: built by `python -m build` and installed from its wheel into a clean venv
    (the `installed` fixture of conftest.py)."""

    root: Path
    """The test's scratch directory: the wheel, the venvs and the projects are all in it."""
    wheel: Path
    venv: Path
    """The clean venv the wheel is installed in."""
    env: dict[str, str]
    """No PYTHONPATH, no active venv, no checkout on PATH: nothing of the checkout can be imported."""

    def run(self, args: list[str], cwd: Path, timeout: float = 300) -> subprocess.CompletedProcess[str]:
        done = subprocess.run(args, cwd=cwd, env=self.env, capture_output=True, text=True, timeout=timeout)
        assert done.returncode == 0, f"{args}: {done.stdout[-4000:]}{done.stderr[-4000:]}"
        return done


def elf_machine(path: Path) -> int:
    """The `e_machine` field of an ELF file's header (little-endian)."""
    header = path.read_bytes()[:20]
    assert header[:4] == b"\x7fELF", path
    return int.from_bytes(header[18:20], "little")


def offline_env() -> dict[str, str]:
    """The environment with pip limited to the downloaded wheels (the layers', for the current locks: DepsLayer's
    and DurableLayer's, stamped by ./scripts/test with the sha256 of the two locks one after the other)."""
    stamp = WHEELS / ".lock-sha256"
    locks = hashlib.sha256(LOCK.read_bytes() + DURABLE_LOCK.read_bytes()).hexdigest()
    if not stamp.is_file() or stamp.read_text().strip() != locks:
        pytest.fail(
            f"{WHEELS} does not hold the wheels of the layers' locks: run ./scripts/test once (it downloads them)"
        )
    return {**os.environ, "PIP_NO_INDEX": "1", "PIP_FIND_LINKS": str(WHEELS), "PIP_DISABLE_PIP_VERSION_CHECK": "1"}


SAM_VERSION = "1.170.0"
SAM_VENV = ROOT / ".cache/samcli"
"""AWS SAM CLI in its own venv (./scripts/test installs it there: its pins clash with the dev tools)."""


def sam_environment() -> dict[str, str]:
    """SAM CLI's environment: offline pip (the layers' wheels), no telemetry, fake credentials."""
    sam = SAM_VENV / "bin/sam"
    version = subprocess.run([sam, "--version"], capture_output=True, text=True).stdout if sam.is_file() else ""
    if not version.strip().endswith(f"version {SAM_VERSION}"):
        pytest.fail(f"AWS SAM CLI {SAM_VERSION} is not in {SAM_VENV}: run ./scripts/test once (it installs it)")
    fake_aws = {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing", "AWS_SESSION_TOKEN": "testing"}
    region = {"AWS_REGION": "us-east-1", "AWS_DEFAULT_REGION": "us-east-1"}
    # the builds' `python3` is this venv's: a pyenv shim would rehash after every `pip install`, and the
    # builds SAM runs at once race on that rehash (`pyenv: cannot rehash`: a failed build)
    path = os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])
    return {**offline_env(), **fake_aws, **region, "SAM_CLI_TELEMETRY": "0", "PATH": path}


def run_sam(args: list[str], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(SAM_VENV / "bin/sam"), *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=300
    )


def sam_routes(requests: list[dict[str, object]], env: dict[str, str]) -> list[object]:
    """The routes SAM CLI discovers for each {"template", "parameters"} (tests/infra/sam_routes.py)."""
    done = subprocess.run(
        [str(SAM_VENV / "bin/python"), str(ROOT / "tests/infra/sam_routes.py")],
        input=json.dumps(requests),
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    found: list[object] = json.loads(done.stdout)
    return found
