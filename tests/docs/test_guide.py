"""docs/guide.md runs: its Python blocks in order in one namespace, then the `test_*` coroutines they
define; its shell blocks in a scratch directory with the kit's environment. Any other block fails."""

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

from tests.support.processes import ROOT

GUIDE = ROOT / "docs/guide.md"
BLOCK = re.compile(r"^```(\w*)\n(.*?)^```", re.MULTILINE | re.DOTALL)


def _blocks(language: str) -> list[str]:
    return [code for lang, code in BLOCK.findall(GUIDE.read_text()) if lang == language]


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
