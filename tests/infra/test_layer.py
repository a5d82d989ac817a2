"""The dependency layer builds for the Lambda platform (arm64, CPython 3.13) with the same Makefile `sam build` runs."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.processes import ROOT

EM_AARCH64 = 183


def _elf_machine(path: Path) -> int:
    """The `e_machine` field of an ELF file's header (little-endian)."""
    header = path.read_bytes()[:20]
    assert header[:4] == b"\x7fELF", path
    return int.from_bytes(header[18:20], "little")


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
    libraries = sorted(site.rglob("*.so"))
    extensions = [p.name for p in libraries]
    assert extensions, "expected pydantic_core's compiled extension"
    # CPython 3.13 extensions, or stable-ABI ones (cryptography's `abi3`), all built for arm64:
    assert all("cpython-313-aarch64-linux-gnu" in name or ".abi3." in name for name in extensions), extensions
    assert all(_elf_machine(path) == EM_AARCH64 for path in libraries), extensions
    for module in ("pydantic", "starlette", "mangum", "jwt", "cryptography", "lambda_mcp/entrypoints/http.py"):
        assert (site / module).exists(), module
    assert not list(site.rglob("*.pyc")), "bytecode for the build machine's Python does not belong in the layer"
    size = sum(p.stat().st_size for p in site.rglob("*") if p.is_file())
    print(f"\nlayer: {size / 1e6:.1f} MB unzipped, extensions: {extensions}")
    assert size < 50_000_000
