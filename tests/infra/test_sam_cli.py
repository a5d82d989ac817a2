"""template.yaml through AWS SAM CLI itself (1.170.0, in .cache/samcli; ./scripts/test installs it): the routes
`sam local start-api` discovers, `sam validate --lint`, and `sam build` offline, cold and cached."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.infra.builds import EM_AARCH64, elf_machine, run_sam, sam_routes
from tests.infra.templates import AUDIENCE, ISSUER
from tests.support.processes import ROOT

ANY_METHOD = ["DELETE", "GET", "HEAD", "OPTIONS", "PATCH", "POST", "PUT"]
WELL_KNOWN = [
    "/.well-known/oauth-authorization-server",
    "/.well-known/oauth-protected-resource",
    "/.well-known/oauth-protected-resource/mcp",
]
MODES = {"jwt": {"AuthIssuer": ISSUER, "AuthAudience": AUDIENCE}, "cognito-direct": {}, "iam": {}, "none": {}}
COMBINATIONS = [
    {"ApiType": api, "AuthMode": mode, **extra} for api in ("HTTP", "REST") for mode, extra in MODES.items()
] + [{"ApiType": "REST", "AuthMode": mode, **extra, "Transport": "streaming"} for mode, extra in MODES.items()]
COMBINATIONS += [{"ApiType": api, "AuthMode": "none", "TaskBackend": "durable"} for api in ("HTTP", "REST")]


def test_sam_cli_routes_every_method_of_mcp_and_the_discovery_documents_to_the_function(
    sam_env: dict[str, str],
) -> None:
    requests: list[dict[str, object]] = [
        {"template": str(ROOT / "template.yaml"), "parameters": c} for c in COMBINATIONS
    ]
    discovered = sam_routes(requests, sam_env)
    for combination, found in zip(COMBINATIONS, discovered, strict=True):
        assert isinstance(found, list), (combination, found)
        routes: dict[str, Any] = {}
        for route in found:  # SAM CLI may list a path more than once (ANY, then OPTIONS)
            routes.setdefault(route["path"], []).append(route)
        assert sorted(routes) == sorted(["/mcp", *WELL_KNOWN]), combination
        # SAM CLI ignores resource conditions, so it reports both APIs' routes (the REST API's win,
        # event type "Api"); what matters is that each reaches the HTTP function.
        assert {r["function"] for r in found} == {"McpHttpFunction"}, combination
        assert sorted({m for r in routes["/mcp"] for m in r["methods"]}) == ANY_METHOD, combination
        for path in WELL_KNOWN:
            assert [m for r in routes[path] for m in r["methods"]] == ["GET"], (combination, path)


def test_sam_validate_lint_passes(sam_env: dict[str, str]) -> None:
    done = run_sam(["validate", "--lint", "--template-file", str(ROOT / "template.yaml")], ROOT, sam_env)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "is a valid SAM Template" in done.stdout


def _build(project: Path, out: Path, env: dict[str, str], *parameters: str) -> str:
    """`sam build --cached` of project/template.yaml into out/; what it printed (its log is on stderr).
    Run from out/, where SAM CLI leaves its `.aws-sam/`."""
    args = ["build", "--cached", "--template-file", str(project / "template.yaml"), "--build-dir", str(out / "build")]
    overrides = ["--parameter-overrides", "AuthMode=none", *parameters]
    done = run_sam([*args, "--cache-dir", str(out / "cache"), *overrides], out, env)
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout + done.stderr


@pytest.mark.parametrize("backend", ["sqs", "durable"])
def test_sam_build_makes_the_layers_and_the_functions_offline(
    sam_env: dict[str, str], tmp_path: Path, backend: str
) -> None:
    _build(ROOT, tmp_path, sam_env, f"TaskBackend={backend}")
    build = tmp_path / "build"
    deps, kit, durable = build / "DepsLayer/python", build / "KitLayer/python", build / "DurableLayer/python"
    extensions = sorted(deps.rglob("*.so"))
    assert extensions and all(elf_machine(p) == EM_AARCH64 for p in extensions)
    assert (deps / "pydantic").is_dir() and not (deps / "lambda_mcp").exists()
    assert (kit / "lambda_mcp/entrypoints/http.py").is_file() and not list(kit.rglob("__pycache__"))
    assert len(list(kit.glob("lambda_mcp-*.dist-info/METADATA"))) == 1
    # SAM CLI builds every resource, whatever its condition: the durable worker's layer and code too (then
    # TaskBackend=sqs deploys neither).
    assert (durable / "aws_durable_execution_sdk_python").is_dir() and (durable / "botocore").is_dir()
    for function in ("McpHttpFunction", "TaskWorkerFunction", "McpAuthorizerFunction", "DurableTaskWorkerFunction"):
        assert sorted(p.name for p in (build / function).iterdir()) == ["run.sh", "server.py"], function
        # run.sh, the handler of Transport=streaming, stays executable: LWA's wrapper execs it
        assert (build / function / "run.sh").stat().st_mode & 0o111 == 0o111, function
    built = (build / "template.yaml").read_text()
    assert "ContentUri: DepsLayer" in built and "ContentUri: KitLayer" in built and "ContentUri: DurableLayer" in built
    layers = (deps.parent, kit.parent, durable.parent)
    sizes = {d.name: sum(p.stat().st_size for p in d.rglob("*") if p.is_file()) for d in layers}
    print(f"\nlayers (unzipped): { {name: f'{size / 1e6:.1f} MB' for name, size in sizes.items()} }")


def test_a_change_under_src_rebuilds_the_kit_layer_and_not_the_dependencies(
    sam_env: dict[str, str], tmp_path: Path
) -> None:
    repo = tmp_path / "repo"  # what the template needs, so that the change stays out of the real tree
    ignore = shutil.ignore_patterns("__pycache__", "*.egg-info")
    for name in ("src", "layers", "examples/weather"):
        shutil.copytree(ROOT / name, repo / name, ignore=ignore)
    for name in ("template.yaml", "pyproject.toml"):
        shutil.copy(ROOT / name, repo / name)
    valid = "Valid cache found, copying previously built resources for following layers ({})"
    invalid = "Cache is invalid, running build and copying resources for following layers ({})"
    cold = _build(repo, tmp_path, sam_env)
    assert invalid.format("DepsLayer") in cold and invalid.format("KitLayer") in cold
    unchanged = _build(repo, tmp_path, sam_env)
    assert valid.format("DepsLayer") in unchanged and valid.format("KitLayer") in unchanged
    with (repo / "src/lambda_mcp/config.py").open("a") as module:
        module.write("# changed\n")
    changed = _build(repo, tmp_path, sam_env)
    assert valid.format("DepsLayer") in changed and invalid.format("KitLayer") in changed
    assert valid.format("DurableLayer") in changed  # builds/durable/ is its own cache key, like builds/deps/
    rebuilt = tmp_path / "build/KitLayer/python/lambda_mcp/config.py"
    assert rebuilt.read_text().endswith("# changed\n")
