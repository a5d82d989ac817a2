"""The layers and the functions build for the Lambda platform (arm64, CPython 3.13) with the Makefiles `sam build`
runs, offline: pip installs from the wheels ./scripts/test downloads into .cache/layer-wheels."""

from __future__ import annotations

import importlib.metadata
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

from tests.infra.builds import BUILDS, EM_AARCH64, elf_machine, offline_env
from tests.support.processes import ROOT


def _make(makefile: Path, target: str, cwd: Path, artifacts: Path) -> None:
    make = shutil.which("make")
    if make is None:
        pytest.fail("the builds need `make` (sam build uses it too)")
    done = subprocess.run(
        [make, "--makefile", str(makefile), target, f"ARTIFACTS_DIR={artifacts}", f"PYTHON={sys.executable}"],
        cwd=cwd,
        env=offline_env(),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr


def _extensions(site: Path) -> list[Path]:
    libraries = sorted(site.rglob("*.so"))
    names = [p.name for p in libraries]
    # CPython 3.13 extensions, or stable-ABI ones (cryptography's `abi3`), all built for arm64:
    assert all("cpython-313-aarch64-linux-gnu" in name or ".abi3." in name for name in names), names
    assert all(elf_machine(path) == EM_AARCH64 for path in libraries), names
    return libraries


def _scratch_copy(source: Path, to: Path) -> Path:
    """What SAM does before a makefile build: a copy of CodeUri/ContentUri to run `make` in."""
    shutil.copytree(source, to, ignore=shutil.ignore_patterns("*.egg-info"))
    return to


def test_the_dependency_layer_builds_offline_with_arm64_cp313_wheels(tmp_path: Path) -> None:
    scratch = _scratch_copy(BUILDS / "deps", tmp_path / "scratch")
    _make(scratch / "Makefile", "build-DepsLayer", scratch, tmp_path / "out")
    site = tmp_path / "out/python"
    extensions = [p.name for p in _extensions(site)]
    assert any(name.startswith("_pydantic_core") for name in extensions), extensions
    for module in ("pydantic", "starlette", "mangum", "jwt", "cryptography", "aws_lambda_powertools", "aws_xray_sdk"):
        assert (site / module).exists(), module
    # The kit has its own layer; boto3 and botocore (and what only they need) come from the runtime.
    for absent in ("lambda_mcp", "boto3", "botocore", "urllib3", "dateutil", "bin"):
        assert not (site / absent).exists(), absent
    assert not list(site.rglob("*.pyc")), "bytecode for the build machine's Python does not belong in the layer"
    assert sorted(p.name for p in scratch.iterdir()) == ["Makefile", "requirements.in", "requirements.lock"]
    size = sum(p.stat().st_size for p in site.rglob("*") if p.is_file())
    print(f"\ndependency layer: {size / 1e6:.1f} MB unzipped, extensions: {extensions}")
    assert size < 50_000_000


LAMBDA_PYTHON = {
    "python_version": "3.13",
    "python_full_version": "3.13.0",
    "implementation_name": "cpython",
    "platform_python_implementation": "CPython",
    "sys_platform": "linux",
    "platform_system": "Linux",
    "platform_machine": "aarch64",
    "os_name": "posix",
    "extra": "",
}
"""The marker environment of the python3.13 arm64 Lambda runtime."""


def _unmet(site: Path) -> list[tuple[str, Requirement]]:
    """Every requirement of a distribution in `site` (the Lambda runtime's markers, no extras) that no
    distribution in `site` meets: (the distribution, its requirement)."""
    found = {canonicalize_name(d.metadata["Name"]): d for d in importlib.metadata.distributions(path=[str(site)])}
    unmet = []
    for name, dist in sorted(found.items()):
        for line in dist.requires or []:
            requirement = Requirement(line)
            if requirement.marker is not None and not requirement.marker.evaluate(LAMBDA_PYTHON):
                continue
            have = found.get(canonicalize_name(requirement.name))
            if have is None or not requirement.specifier.contains(have.version, prereleases=True):
                unmet.append((name, requirement))
    return unmet


def test_the_durable_layer_builds_offline_and_with_the_dependency_layer_meets_every_requirement(
    tmp_path: Path,
) -> None:
    """TaskBackend=durable: the worker's layers are DepsLayer, KitLayer and DurableLayer, merged into /opt/python."""
    scratch = _scratch_copy(BUILDS / "durable", tmp_path / "scratch")
    _make(scratch / "Makefile", "build-DurableLayer", scratch, tmp_path / "durable")
    site = tmp_path / "durable/python"
    for module in ("aws_durable_execution_sdk_python", "boto3", "botocore", "s3transfer", "dateutil", "urllib3"):
        assert (site / module).is_dir(), module
    # DepsLayer's packages and the kit are not copied again, and nothing is compiled for a machine.
    for absent in ("lambda_mcp", "jmespath", "pydantic", "aws_lambda_powertools", "bin"):
        assert not (site / absent).exists(), absent
    assert not list(site.rglob("*.so")) and not list(site.rglob("*.pyc"))
    (boto3,) = importlib.metadata.distributions(name="boto3", path=[str(site)])
    assert Version(boto3.version) >= Version("1.43.114")  # what the SDK requires; the runtime's is older
    size = sum(p.stat().st_size for p in site.rglob("*") if p.is_file())
    print(f"\ndurable layer: {size / 1e6:.1f} MB unzipped")
    assert size < 60_000_000
    deps = _scratch_copy(BUILDS / "deps", tmp_path / "deps-scratch")
    _make(deps / "Makefile", "build-DepsLayer", deps, tmp_path / "deps")
    # DepsLayer alone (every other function): only botocore is missing (aws-xray-sdk's), which the runtime has.
    assert [(name, r.name) for name, r in _unmet(tmp_path / "deps/python")] == [("aws-xray-sdk", "botocore")]
    # The layers as Lambda merges them for the durable worker: disjoint (nothing overwritten), nothing missing.
    merged = shutil.copytree(tmp_path / "deps/python", tmp_path / "merged")
    for path in sorted(site.iterdir()):
        assert not (merged / path.name).exists(), path.name
        shutil.move(path, merged / path.name)
    assert _unmet(merged) == []


def test_the_kit_layer_is_the_package_in_src_with_its_version_and_nothing_stale(tmp_path: Path) -> None:
    scratch = _scratch_copy(ROOT / "src", tmp_path / "src")
    # What a developer's tree holds that the layer must not: bytecode, and a module deleted since the last build.
    (scratch / "lambda_mcp/__pycache__").mkdir(exist_ok=True)
    (scratch / "lambda_mcp/__pycache__/kit.cpython-311.pyc").write_bytes(b"stale")
    (scratch / "lambda_mcp/polling.py").unlink()
    _make(ROOT / "layers/kit/Makefile", "build-KitLayer", scratch, tmp_path / "out")
    site = tmp_path / "out/python"
    assert (site / "lambda_mcp/entrypoints/http.py").is_file() and (site / "lambda_mcp/py.typed").is_file()
    assert not (site / "lambda_mcp/polling.py").exists()
    assert not list(site.rglob("__pycache__")) and not list(site.rglob("*.pyc"))
    assert not list(site.rglob("*.so"))  # pure Python
    version = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    assert sorted(p.name for p in site.iterdir()) == ["lambda_mcp", f"lambda_mcp-{version}.dist-info"]
    # What importlib.metadata finds on the layer's path alone (`/opt/python` in Lambda).
    (found,) = importlib.metadata.distributions(name="lambda-mcp", path=[str(site)])
    assert found.version == version and found.metadata["Name"] == "lambda-mcp"
    # The package is copied as it is, module for module (scaffold data included).
    expected = {
        p.relative_to(scratch)
        for p in (scratch / "lambda_mcp").rglob("*")
        if p.is_file() and "__pycache__" not in p.parts
    }
    built = {p.relative_to(site) for p in (site / "lambda_mcp").rglob("*") if p.is_file()}
    assert built == expected


def test_the_function_makefile_installs_a_requirements_txt_for_arm64_without_python313(tmp_path: Path) -> None:
    code = _scratch_copy(ROOT / "examples/weather", tmp_path / "code")
    (code / "requirements.txt").write_text("wrapt==2.5.2\n")  # has an arm64 cp313 wheel in the cache
    (code / "__pycache__").mkdir(exist_ok=True)
    (code / "__pycache__/server.cpython-311.pyc").write_bytes(b"stale")
    (code / "bin").mkdir()
    (code / "bin/tool").write_text("")
    _make(BUILDS / "function/Makefile", "build-AnyFunction", code, tmp_path / "out")
    out = tmp_path / "out"
    assert (out / "server.py").read_text() == (ROOT / "examples/weather/server.py").read_text()
    assert (out / "wrapt").is_dir() and any(elf_machine(p) == EM_AARCH64 for p in _extensions(out))
    for absent in ("requirements.txt", "bin", "__pycache__"):
        assert not (out / absent).exists(), absent
    assert not list(out.rglob("*.pyc"))
