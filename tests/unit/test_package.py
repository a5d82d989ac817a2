"""The public API is small and pinned, and the layers keep their import boundaries."""

from __future__ import annotations

import ast
import importlib
import subprocess
import sys
from pathlib import Path

import lambda_mcp

SRC = Path(lambda_mcp.__file__).parent
ALLOWED_IN_PROTOCOL = set(sys.stdlib_module_names) | {"pydantic", "__future__"}


def test_public_api_is_pinned() -> None:
    exported = ["CancelledByClient", "ClientError", "ConnectionDeclined", "Context", "CredentialsUnavailable"]
    exported += ["MCPApp", "MCPError", "ToolError", "__version__"]
    assert sorted(lambda_mcp.__all__) == exported
    middleware, testing, types = (
        importlib.import_module(f"lambda_mcp.{m}") for m in ("middleware", "testing", "types")
    )
    assert sorted(testing.__all__) == ["Client", "RequestFailed", "ToolResult"]
    assert sorted(middleware.__all__) == ["CallNext", "Middleware", "RequestInfo"]
    assert {"Elicitation", "Sampled", "TextContent", "ImageContent", "ContentBlock"} <= set(types.__all__)
    for module in (testing, middleware, types):
        assert all(hasattr(module, name) for name in module.__all__)


def test_the_old_middleware_request_name_still_works_with_a_warning() -> None:
    import warnings

    middleware = importlib.import_module("lambda_mcp.middleware")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert middleware.Request is middleware.RequestInfo
    assert caught and issubclass(caught[0].category, DeprecationWarning) and "RequestInfo" in str(caught[0].message)


def test_importing_the_package_loads_no_storage_and_no_web_server() -> None:
    loaded = _modules_after("import lambda_mcp")
    assert not {m for m in loaded if m.startswith(("lambda_mcp.storage", "lambda_mcp.transport", "boto3", "uvicorn"))}


def _modules_after(statement: str) -> set[str]:
    code = f"import sys; {statement}; print(' '.join(sys.modules))"
    output = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    return set(output.split())


def test_protocol_imports_nothing_of_the_kit_or_the_web_stack() -> None:
    """Every import in protocol/ is the standard library, pydantic, or protocol/ itself."""
    for path in (SRC / "protocol").glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom):
                assert node.level <= 1, f"{path.name} imports outside protocol/: {ast.unparse(node)}"
                if node.level == 0:
                    assert (node.module or "").split(".")[0] in ALLOWED_IN_PROTOCOL, ast.unparse(node)
            elif isinstance(node, ast.Import):
                assert all(alias.name.split(".")[0] in ALLOWED_IN_PROTOCOL for alias in node.names), ast.unparse(node)


def test_transport_and_dispatch_never_import_boto3_or_mangum() -> None:
    loaded = _modules_after("import lambda_mcp.transport.app, lambda_mcp.dispatch.dispatcher, lambda_mcp.kit")
    assert not {m for m in loaded if m.startswith(("boto3", "botocore", "mangum", "uvicorn"))}


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(SRC.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(modules: dict[str, Path], name: str) -> set[str]:
    """Every module of the kit `name` imports, at module level or inside a function (lazy imports count)."""
    path = modules[name]
    package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        targets: list[str] = []
        if isinstance(node, ast.ImportFrom):
            base = package[: len(package) - node.level + 1] if node.level else []
            module = ".".join([*base, *([node.module] if node.module else [])])
            targets = [f"{module}.{alias.name}" for alias in node.names]
        elif isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        for target in targets:
            while target not in modules and "." in target:  # `from .x import name`: the module is .x
                target = target.rsplit(".", 1)[0]
            if target in modules and target != name:
                found.add(target)
    return found


def test_no_import_cycle_inside_the_package() -> None:
    modules = {_module_name(p): p for p in SRC.rglob("*.py")}
    graph = {name: _imports(modules, name) for name in modules}
    assert "lambda_mcp.dispatch.context" in graph["lambda_mcp.dispatch.dispatcher"]  # the walk sees imports
    state: dict[str, int] = {}  # 1: on the path, 2: done

    def visit(name: str, path: list[str]) -> None:
        state[name] = 1
        for target in sorted(graph[name]):
            if state.get(target) == 1:
                cycle = path[path.index(target) :] + [target]
                raise AssertionError("import cycle: " + " -> ".join(cycle))
            if target not in state:
                visit(target, [*path, target])
        state[name] = 2

    for name in sorted(graph):
        if name not in state:
            visit(name, [name])


LAYERS = {
    "protocol": 0,
    "env_reader": 0,
    "config": 1,
    "polling": 1,
    "runloop": 1,
    "observe": 2,
    "storage": 2,
    "auth": 2,
    "server": 3,
    "state_keys": 3,
    "outbound": 4,
    "tasks": 4,
    "dispatch": 5,
    "facade": 5,
    "transport": 6,
    "worker": 6,
    "kit": 7,
    "loader": 7,
    "middleware": 7,
    "types": 7,
    "entrypoints": 8,
    "testing": 8,
    "scaffold": 8,
    "local": 9,
    "agentcore": 9,
    "remote": 9,
    "serving": 10,
    "agentcore_runtime": 11,
    "clients_document": 9,
    "signout": 10,
    "clients_cli": 10,
    "connections_cli": 10,
    "export_cli": 10,
    "openapi_cli": 10,
    "check_warnings": 9,
    "check": 10,
    "smoke": 10,
    "cli": 12,
    "__main__": 13,
    "": 10,
}
"""Each part of the package by its layer: a module imports only its own part and the layers below."""


def test_every_import_points_down_the_layers() -> None:
    """No arrow runs back up: storage never imports tasks, transport never the kit (`kit.py`, the
    composition root, is above everything it wires)."""
    modules = {_module_name(p): p for p in SRC.rglob("*.py")}
    upward = []
    for name in sorted(modules):
        part = name.split(".")[1] if "." in name else ""
        assert part in LAYERS, f"{name}: add its part to LAYERS"
        for target in sorted(_imports(modules, name)):
            other = target.split(".")[1] if "." in target else ""
            if other != part and LAYERS[other] >= LAYERS[part]:
                upward.append(f"{name} -> {target}")
    assert upward == []


def test_only_the_revisions_module_names_or_compares_protocol_revisions() -> None:
    from lambda_mcp.protocol import revisions

    named = {*revisions.SUPPORTED, "2024-11-05"}
    found = []
    for path in SRC.rglob("*.py"):
        if path.name == "revisions.py":
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Constant) and node.value in named:
                found.append(f"{path.relative_to(SRC)}:{node.lineno}: {node.value!r}")
            if isinstance(node, ast.Compare) and any(
                isinstance(op, (ast.Lt, ast.LtE, ast.Gt, ast.GtE)) for op in node.ops
            ):
                text = ast.unparse(node)
                if "version" in text.lower():
                    found.append(f"{path.relative_to(SRC)}:{node.lineno}: {text}")
    assert found == []


def test_no_module_is_over_400_lines_and_none_in_transport_over_300() -> None:
    for path in SRC.rglob("*.py"):
        lines = len(path.read_text().splitlines())
        limit = 300 if path.parent.name == "transport" else 400
        assert lines <= limit, f"{path.relative_to(SRC)}: {lines} lines (at most {limit})"


def test_the_version_comes_from_the_distribution() -> None:
    import tomllib

    pyproject = tomllib.loads((SRC.parents[1] / "pyproject.toml").read_text())
    assert lambda_mcp.__version__ == pyproject["project"]["version"]
