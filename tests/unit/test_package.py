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
    exported = ["CancelledByClient", "ClientError", "Context", "MCPApp", "MCPError", "__version__"]
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
