"""docs/guide.md runs: its Python blocks in order in one namespace, then the `test_*` coroutines they
define; its shell blocks in a scratch directory with the kit's environment; a Python block that is a
script (`if __name__ == "__main__":`, the official SDK's client) on its own, against `lambda-mcp dev`
serving the other Python blocks as one file. Any other block fails."""

from __future__ import annotations

import inspect
import os
import re
import subprocess
import sys
import types
from pathlib import Path
from typing import Any

import pytest

from tests.docs.blocks import BLOCK, SCRIPT_GUARD, blocks
from tests.support.processes import ROOT, lambda_mcp_dev

GUIDE = ROOT / "docs/guide.md"


def _blocks(language: str) -> list[str]:
    """The guide's blocks in `language`; for Python, those that run in the guide's namespace (not scripts)."""
    return [code for code in blocks(GUIDE, language) if SCRIPT_GUARD not in code]


def test_every_block_is_python_or_bash() -> None:
    languages = [lang for lang, _ in BLOCK.findall(GUIDE.read_text())]
    assert languages and set(languages) <= {"python", "bash"}, languages
    assert len(_blocks("python")) >= 8 and len(_blocks("bash")) >= 2


@pytest.mark.anyio
async def test_the_python_blocks_run_and_their_tests_pass() -> None:
    module = types.ModuleType("lambda_mcp_guide")  # a real module: dataclasses and pydantic look it up
    sys.modules[module.__name__] = module
    namespace: dict[str, Any] = module.__dict__
    try:
        for index, code in enumerate(_blocks("python")):
            exec(compile(code, f"{GUIDE}:block{index + 1}", "exec"), namespace)  # noqa: S102 (the guide's code)
    finally:
        del sys.modules[module.__name__]
    tests = [
        value for name, value in namespace.items() if name.startswith("test_") and inspect.iscoroutinefunction(value)
    ]
    assert len(tests) >= 6
    for test in tests:
        await test()


def test_the_shell_blocks_run(tmp_path: Path) -> None:
    env = {
        **os.environ,
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
        "KIT_ROOT": str(ROOT),
        "LAMBDA_MCP_AUTH": "none",
    }
    for code in _blocks("bash"):
        done = subprocess.run(
            ["bash", "-euo", "pipefail", "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300
        )
        assert done.returncode == 0, f"{code}\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"


def test_the_sdk_client_script_runs_against_lambda_mcp_dev(tmp_path: Path) -> None:
    """Section 11's official SDK client, as the guide says to run it: `python client.py` against
    `lambda-mcp dev expenses.py`, on both eras, with its elicitation answered and its progress shown."""
    (client,) = [code for code in blocks(GUIDE, "python") if SCRIPT_GUARD in code]
    assert "mode=mode" in client and "progress_callback=" in client and "elicitation_callback=" in client
    (tmp_path / "expenses.py").write_text("\n\n".join(_blocks("python")))
    (tmp_path / "client.py").write_text(client)
    server = lambda_mcp_dev(str(tmp_path / "expenses.py"), through_lambda=False, log=tmp_path / "dev.log")
    try:
        done = subprocess.run(
            [sys.executable, "client.py", server.url], cwd=tmp_path, capture_output=True, text=True, timeout=120
        )
    finally:
        server.stop()
    assert done.returncode == 0, done.stdout + done.stderr + server.output()
    eras = re.split(r"^(\S+) -> (\S+)$", done.stdout, flags=re.MULTILINE)[1:]
    assert [(eras[0], eras[1]), (eras[3], eras[4])] == [("2026-07-28", "2026-07-28"), ("legacy", "2025-11-25")]
    for printed in (eras[2], eras[5]):  # each era: the question, the answer's effect, the progress, the result
        assert "asked: Approve e1 (12.50 EUR)?" in printed and "rejected by Ana" in printed, done.stdout
        assert re.search(r"^progress \S+/\S+: ", printed, re.MULTILINE) and "2026-10: " in printed, done.stdout
