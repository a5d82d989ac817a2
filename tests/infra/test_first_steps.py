"""The first hour as the docs tell it (issue 34), each step run as written (tests/docs/blocks.py) in a fresh
virtual environment that holds only what the docs installed so far: README.md's "Install" blocks (from the
package index, from a checkout, as a wheel), its "A project of your own" block, the steps `lambda-mcp new`
prints and the guide's section 9 block; and `./scripts/dev` in a fresh clone, with the PATH it says to set.
The package index is this checkout's wheel (`PIP_FIND_LINKS`) until the first release is published."""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tests.docs.blocks import Script, blocks, script
from tests.infra.builds import VERSION, Installed
from tests.support.polling import wait_until
from tests.support.processes import ROOT, free_port

README = ROOT / "README.md"
GUIDE = ROOT / "docs/guide.md"
DEPLOY = "sam build && sam deploy --guided"
"""The one line of these steps a test cannot run: it deploys to an AWS account (`sam build` is tested on a
project in test_install.py)."""


def _clone(parent: Path) -> Path:
    """A copy of the checkout as `git clone` would give it (tracked and unignored files), named lambda-mcp."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        capture_output=True,
        check=True,
    ).stdout.decode()
    clone = parent / "lambda-mcp"
    for name in filter(None, listed.split("\0")):
        source = ROOT / name
        if source.is_file():
            (clone / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, clone / name)
    return clone


def _bash(code: str, cwd: Path, env: dict[str, str], timeout: float = 600) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", code], cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout
    )
    assert done.returncode == 0, f"{code}\n--- stdout\n{done.stdout[-4000:]}\n--- stderr\n{done.stderr[-4000:]}"
    return done


def _with_the_kit(installed: Installed, folder: Path) -> dict[str, str]:
    """A fresh venv in `folder` with only the kit's wheel installed (what "Install" leaves), activated."""
    venv = folder / ".venv"
    installed.run([sys.executable, "-m", "venv", str(venv)], cwd=folder)
    installed.run([str(venv / "bin/python"), "-m", "pip", "install", "--quiet", str(installed.wheel)], cwd=folder)
    return {**installed.env, "VIRTUAL_ENV": str(venv), "PATH": f"{venv / 'bin'}{os.pathsep}{installed.env['PATH']}"}


def _run_steps(steps: Script, cwd: Path, env: dict[str, str]) -> str:
    assert steps.skipped == [DEPLOY], steps.skipped  # every other line runs
    done = _bash(steps.text, cwd, env)
    assert re.search(r"\b\d+ passed in ", done.stdout), done.stdout[-3000:]  # the project's own tests
    return done.stdout


@pytest.mark.parametrize("source", ["index", "checkout", "wheel"])
def test_each_way_to_install_in_the_readme_works_as_written(installed: Installed, tmp_path: Path, source: str) -> None:
    venv, *ways = blocks(README, "bash", "Install")
    assert len(ways) == 3 and "source .venv/bin/activate" in venv
    block = dict(zip(["index", "checkout", "wheel"], ways, strict=True))[source]
    assert {"index": "pip install lambda-mcp\n", "checkout": "./lambda-mcp", "wheel": "-m build"}[source] in block
    _clone(tmp_path)
    env = dict(installed.env)
    if source == "index":  # the index, until the first release is published: the wheel of this checkout
        env["PIP_FIND_LINKS"] = f"{installed.wheel.parent} {os.environ.get('PIP_FIND_LINKS', '')}".strip()
    where = 'python -c "import lambda_mcp, sys; print(lambda_mcp.__file__, sys.prefix)"'
    done = _bash(f'{venv}{block}echo "installed: $({where}) $(lambda-mcp --version)"\n', tmp_path, env)
    found = re.search(r"^installed: (\S+) (\S+) lambda-mcp (\S+)$", done.stdout, re.MULTILINE)
    assert found, done.stdout[-3000:]
    module, prefix, version = found.groups()
    assert version == VERSION and Path(prefix) == tmp_path / ".venv", done.stdout
    assert Path(module).is_relative_to(tmp_path / ".venv")  # installed, not imported from the checkout


def test_the_readmes_project_block_runs_in_a_fresh_venv(installed: Installed, tmp_path: Path) -> None:
    (block,) = blocks(README, "bash", "A project of your own")
    out = _run_steps(script(block, free_port()), tmp_path, _with_the_kit(installed, tmp_path))
    assert '"statusCode": 200' in out and "Hello, Ada!" in out  # lambda-mcp invoke events/greet.json


def test_the_steps_lambda_mcp_new_prints_run_as_printed(installed: Installed, tmp_path: Path) -> None:
    env = _with_the_kit(installed, tmp_path)
    printed = _bash("lambda-mcp new demo", tmp_path, env).stdout
    head, _, tail = printed.partition("; next:\n")
    assert head == "created demo", printed
    steps = "\n".join(line.removeprefix("  ") for line in tail.splitlines())
    assert steps.startswith("cd demo\npython -m pip install -r requirements-dev.txt"), printed
    _run_steps(script(steps, free_port()), tmp_path, env)


def test_the_guides_deploying_block_runs_in_a_fresh_venv(installed: Installed, tmp_path: Path) -> None:
    (block,) = blocks(GUIDE, "bash", "9. Deploying")
    steps = script(block, free_port())
    assert steps.skipped == []
    done = _bash(steps.text, tmp_path, _with_the_kit(installed, tmp_path))
    assert re.search(r"\b\d+ passed in ", done.stdout), done.stdout[-3000:]


def test_scripts_dev_says_how_to_put_lambda_mcp_on_path(installed: Installed, tmp_path: Path) -> None:
    clone = _clone(tmp_path)
    port = free_port()
    log = tmp_path / "dev.log"
    with log.open("wb") as out:
        server = subprocess.Popen(
            ["./scripts/dev", "--port", str(port)], cwd=clone, env=installed.env, stdout=out, stderr=subprocess.STDOUT
        )
    try:
        wait_until(lambda: "serving" in log.read_text() or server.poll() is not None, timeout=300, what="scripts/dev")
        assert server.poll() is None, log.read_text()
    finally:
        server.send_signal(signal.SIGTERM)  # scripts/dev execs lambda-mcp dev: this is the server's PID
        server.wait(timeout=10)
    (hint,) = [line.strip() for line in log.read_text().splitlines() if line.strip().startswith("source ")]
    command = hint.split("#")[0].strip()
    assert command == f"source {clone}/.venv/bin/activate", hint
    done = _bash(f"{command}\nlambda-mcp --version\n", tmp_path, installed.env)
    assert done.stdout.strip() == f"lambda-mcp {VERSION}"
