"""The dependency layer builds for the Lambda platform (arm64, CPython 3.13) with the same Makefile `sam build` runs."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.processes import ROOT


def test_the_layer_builds_with_arm64_cp313_wheels_and_the_kit(tmp_path: Path) -> None:
    make = shutil.which("make")
    if make is None:
        pytest.fail("the layer build needs `make` (sam build uses it too)")
    done = subprocess.run(
        [
            make,
            "-f",
            str(ROOT / "layers/deps/Makefile"),
            "build-DepsLayer",
            f"ARTIFACTS_DIR={tmp_path}",
            f"PYTHON={sys.executable}",
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    site = tmp_path / "python"
    extensions = sorted(p.name for p in site.rglob("*.so"))
    assert extensions, "expected pydantic_core's compiled extension"
    assert all("cpython-313-aarch64-linux-gnu" in name for name in extensions), extensions
    for module in ("pydantic", "starlette", "mangum", "lambda_mcp/entrypoints/http.py"):
        assert (site / module).exists(), module
    assert not list(site.rglob("*.pyc")), "bytecode for the build machine's Python does not belong in the layer"
    size = sum(p.stat().st_size for p in site.rglob("*") if p.is_file())
    print(f"\nlayer: {size / 1e6:.1f} MB unzipped, extensions: {extensions}")
    assert size < 50_000_000
