"""The public API is small and pinned, and the layers keep their import boundaries."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import lambda_mcp

SRC = Path(lambda_mcp.__file__).parent
ALLOWED_IN_PROTOCOL = set(sys.stdlib_module_names) | {"pydantic", "__future__"}


def test_public_api_is_pinned() -> None:
    exported = ["CancelledByClient", "ClientError", "Context", "MCPApp", "MCPError", "ToolError", "__version__"]
    assert sorted(lambda_mcp.__all__) == exported


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


def test_no_module_is_over_400_lines_and_none_in_transport_over_300() -> None:
    for path in SRC.rglob("*.py"):
        lines = len(path.read_text().splitlines())
        limit = 300 if path.parent.name == "transport" else 400
        assert lines <= limit, f"{path.relative_to(SRC)}: {lines} lines (at most {limit})"


def test_the_version_comes_from_the_distribution() -> None:
    import tomllib

    pyproject = tomllib.loads((SRC.parents[1] / "pyproject.toml").read_text())
    assert lambda_mcp.__version__ == pyproject["project"]["version"]
