"""Fixtures of the infra tests."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from tests.infra.builds import VERSION, WHEEL, Installed, clean_env, sam_environment
from tests.support.processes import ROOT


@pytest.fixture(scope="session")
def sam_env() -> dict[str, str]:
    """The environment AWS SAM CLI runs in, offline (fails clearly when ./scripts/test has not set it up)."""
    return sam_environment()


@pytest.fixture(scope="session")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Installed:
    """The wheel and sdist `python -m build` makes of the checkout (twine-checked), and the wheel installed
    into a clean venv (test_install.py, test_first_steps.py)."""
    root = tmp_path_factory.mktemp("install")
    env = clean_env(dict(os.environ))
    dist = root / "dist"
    build = [sys.executable, "-m", "build", "--outdir", str(dist), str(ROOT)]  # the sdist, then the wheel from it
    done = subprocess.run(build, cwd=root, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr
    assert sorted(p.name for p in dist.iterdir()) == [WHEEL, f"lambda_mcp-{VERSION}.tar.gz"]
    twine = [sys.executable, "-m", "twine", "check", "--strict", *map(str, sorted(dist.iterdir()))]
    checked = subprocess.run(twine, cwd=root, env=env, capture_output=True, text=True, timeout=120)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    kit = Installed(root, dist / WHEEL, root / "venv", env)
    kit.run([sys.executable, "-m", "venv", str(kit.venv)], cwd=root)
    kit.run([str(kit.venv / "bin/python"), "-m", "pip", "install", "--quiet", str(kit.wheel)], cwd=root)
    return kit
