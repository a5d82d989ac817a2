"""lambda-mcp: host MCP servers on AWS Lambda, for every current MCP client.

```python
from lambda_mcp import MCPApp
app = MCPApp("weather", version="1.0.0")
```
"""

from .protocol.errors import MCPError
from .server.app import MCPApp
from .server.context import CancelledByClient, ClientError, Context

__version__ = "0.1.0"
__all__ = ["CancelledByClient", "ClientError", "Context", "MCPApp", "MCPError", "__version__"]
