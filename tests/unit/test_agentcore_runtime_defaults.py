"""`serve --agentcore` binds what AgentCore Runtime's MCP contract says (`0.0.0.0:8000`) unless told otherwise."""

from __future__ import annotations

from typing import Any

import pytest

from lambda_mcp import agentcore_runtime


def test_the_runtime_mode_listens_on_all_interfaces_port_8000(monkeypatch: pytest.MonkeyPatch) -> None:
    bound: list[tuple[str, int]] = []
    served: list[Any] = []
    monkeypatch.setattr("lambda_mcp.local.dev.listen", lambda host, port: bound.append((host, port)) or object())
    monkeypatch.setattr("lambda_mcp.serving.run_uvicorn", lambda app, sock: served.append(app))
    env = {"LAMBDA_MCP_AUTH": "none"}
    agentcore_runtime.serve_runtime("examples/conformance/server.py", environ=env)
    agentcore_runtime.serve_runtime("examples/conformance/server.py", "127.0.0.1", 9123, environ=env)
    assert bound == [("0.0.0.0", 8000), ("127.0.0.1", 9123)] and len(served) == 2
