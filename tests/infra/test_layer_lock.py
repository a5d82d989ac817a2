"""The layers' inputs: requirements.in names the kit's runtime dependencies with pyproject.toml's ranges, and
requirements.lock pins each within them, with hashes, for the Lambda platform; the same for the durable worker's
layer (TaskBackend=durable) and the `durable` extra."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

from tests.support.processes import ROOT

DEPS = ROOT / "src/lambda_mcp/scaffold/project/builds/deps"
RUNTIME_EXTRAS = ("auth", "aws", "tracing")  # what runs in Lambda; `local`, `aws-local` and `dev` do not
PROVIDED_BY_THE_RUNTIME = {"boto3", "botocore", "s3transfer", "urllib3", "python-dateutil", "six"}
CLI_ONLY = {"uvicorn"}  # of `lambda-mcp dev` only: never in a layer
LOCK_FLAGS = "--generate-hashes --python-version 3.13 --python-platform aarch64-manylinux2014 --only-binary :all:"


def _runtime_requirements() -> dict[str, Requirement]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    lines = list(project["dependencies"])
    for extra in RUNTIME_EXTRAS:
        lines += project["optional-dependencies"][extra]
    requirements = {canonicalize_name(Requirement(line).name): Requirement(line) for line in lines}
    return {name: r for name, r in requirements.items() if name not in PROVIDED_BY_THE_RUNTIME | CLI_ONLY}


def _requirements_in() -> dict[str, Requirement]:
    lines = [line.split("#")[0].strip() for line in (DEPS / "requirements.in").read_text().splitlines()]
    return {canonicalize_name(Requirement(line).name): Requirement(line) for line in lines if line}


def _lock(folder: Path = DEPS) -> tuple[str, dict[str, tuple[str, list[str]]]]:
    """The lock's header and, per package, its pinned version and hashes."""
    text = (folder / "requirements.lock").read_text()
    entries = re.findall(r"^([A-Za-z0-9._-]+)==(\S+)((?:\s*\\\n\s+--hash=\S+)*)", text, flags=re.M)
    pins = {
        canonicalize_name(name): (version, re.findall(r"--hash=(\S+)", hashes)) for name, version, hashes in entries
    }
    pinned_lines = [line for line in text.splitlines() if "==" in line and not line.lstrip().startswith("#")]
    assert len(pinned_lines) == len(pins)  # every pin parsed
    return text.split("\n\n")[0], pins


def test_requirements_in_names_exactly_the_kits_runtime_dependencies_with_their_ranges() -> None:
    expected, listed = _runtime_requirements(), _requirements_in()
    assert set(listed) == set(expected)
    named = {
        "anyio",
        "pydantic",
        "starlette",
        "mangum",
        "aws-lambda-powertools",
        "pyjwt",
        "aws-xray-sdk",
        "httpx",
        "pyyaml",
    }
    assert named == set(listed)
    for name, requirement in listed.items():
        assert requirement.specifier == expected[name].specifier, name
        assert requirement.extras == expected[name].extras, name  # pyjwt[crypto]


def test_every_pin_is_hashed_and_within_pyprojects_range() -> None:
    _, pins = _lock()
    for name, (_, hashes) in pins.items():
        assert hashes and all(re.fullmatch(r"sha256:[0-9a-f]{64}", h) for h in hashes), name
    for name, requirement in _runtime_requirements().items():
        version, _ = pins[name]
        assert requirement.specifier.contains(version, prereleases=True), f"{name}=={version} not in {requirement}"
    assert "cryptography" in pins  # pyjwt's `crypto` extra
    # Packages the Lambda runtime ships with boto3 stay out: a layer copy would shadow the runtime's.
    assert not set(pins) & PROVIDED_BY_THE_RUNTIME
    assert not set(pins) & CLI_ONLY  # what only the CLI needs stays out of the deployment


def test_the_lock_says_how_it_was_made_and_scripts_lock_layer_makes_it_so() -> None:
    header, _ = _lock()
    assert "uv pip compile requirements.in" in header and LOCK_FLAGS in header
    script = (ROOT / "scripts/lock-layer").read_text()
    assert "pip compile requirements.in" in script
    for flag in [*LOCK_FLAGS.split(" --"), "-o requirements.lock"]:
        assert flag.lstrip("-") in script, flag


DURABLE = ROOT / "src/lambda_mcp/scaffold/project/builds/durable"
SDK = "aws-durable-execution-sdk-python"
SDK_NEEDS_BOTO3 = "1.43.114"  # aws-durable-execution-sdk-python 3.0.0's Requires-Dist: boto3>=1.43.114


def _durable_in() -> dict[str, Requirement]:
    lines = [line.split("#")[0].strip() for line in (DURABLE / "requirements.in").read_text().splitlines()]
    return {canonicalize_name(Requirement(line).name): Requirement(line) for line in lines if line}


def test_the_durable_layer_names_the_durable_extra_with_its_range() -> None:
    extra = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    (requirement,) = (Requirement(line) for line in extra["durable"])
    assert requirement.name == SDK
    assert _durable_in() == {SDK: requirement}
    dev = {canonicalize_name(Requirement(line).name): Requirement(line) for line in extra["dev"]}
    assert dev[SDK].specifier == requirement.specifier  # `dev` includes the extra, and the SDK's local runner
    assert f"{SDK}-testing" in dev


def test_the_durable_lock_pins_the_sdk_with_the_boto3_it_needs_and_nothing_the_dependency_layer_has() -> None:
    header, pins = _lock(DURABLE)
    _, deps = _lock()
    for name, (_, hashes) in pins.items():
        assert hashes and all(re.fullmatch(r"sha256:[0-9a-f]{64}", h) for h in hashes), name
    assert _durable_in()[SDK].specifier.contains(pins[SDK][0])
    # The runtime's boto3 is older than the SDK needs: this layer's copy (and botocore's) shadows it.
    assert Version(pins["boto3"][0]) >= Version(SDK_NEEDS_BOTO3) and set(pins) >= PROVIDED_BY_THE_RUNTIME
    # The worker has both layers: what DepsLayer pins stays out of this one (resolved to DepsLayer's version).
    assert not set(pins) & set(deps)
    assert not set(pins) & CLI_ONLY
    assert "uv pip compile requirements.in" in header and LOCK_FLAGS in header
    assert "--constraint ../deps/requirements.lock" in header
    script = (ROOT / "scripts/lock-layer").read_text()
    assert 'cd "$BUILDS/durable"' in script and "--constraint ../deps/requirements.lock" in script
