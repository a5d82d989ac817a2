"""What an app's middleware works with: `RequestInfo`, `CallNext`, `Middleware` (see `MCPApp.middleware`)."""

import warnings
from typing import Any

from .server.middleware import CallNext, Middleware, RequestInfo

__all__ = ["CallNext", "Middleware", "RequestInfo"]


def __getattr__(name: str) -> Any:
    """`Request`, the name of `RequestInfo` before 0.2 (beside Starlette's `Request`): still importable,
    with a `DeprecationWarning`, until 0.3."""
    if name == "Request":
        warnings.warn(
            "lambda_mcp.middleware.Request is now RequestInfo: write `from lambda_mcp.middleware import RequestInfo`",
            DeprecationWarning,
            stacklevel=2,
        )
        return RequestInfo
    raise AttributeError(f"module 'lambda_mcp.middleware' has no attribute {name!r}")
