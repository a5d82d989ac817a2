"""lambda-mcp: host MCP servers on AWS Lambda, for every current MCP client.

```python
from lambda_mcp import MCPApp
app = MCPApp("weather", version="1.0.0")
```
"""

from .protocol.errors import MCPError
from .server.app import MCPApp
from .server.context import ClientError, Context
from .server.credentials import ConnectionDeclined, CredentialsUnavailable
from .server.errors import ToolError
from .server.suspensions import CancelledByClient

__all__ = [
    "CancelledByClient",
    "ClientError",
    "ConnectionDeclined",
    "Context",
    "CredentialsUnavailable",
    "MCPApp",
    "MCPError",
    "ToolError",
    "__version__",
]


def __getattr__(name: str) -> str:
    """`__version__`, read from the installed distribution (pyproject.toml is its only source) on first use."""
    if name == "__version__":
        from importlib.metadata import version

        return version("lambda-mcp")
    raise AttributeError(f"module 'lambda_mcp' has no attribute {name!r}")
