"""An app with the two example middlewares: an audit line per request and a per-principal rate limit on
the state table (only when the app keeps state in DynamoDB: `LAMBDA_MCP_TABLE_NAME`).

    LAMBDA_MCP_RATE_LIMIT=5 lambda-mcp dev examples/middleware/server.py --lambda --aws local
"""

from __future__ import annotations

import os

from audit_log import audit  # the app's directory is on the path when lambda-mcp loads it
from rate_limit import RateLimit

from lambda_mcp import MCPApp

app = MCPApp("guarded", version="1.0.0")
app.middleware(audit)
if os.environ.get("LAMBDA_MCP_TABLE_NAME"):
    limit = int(os.environ.get("LAMBDA_MCP_RATE_LIMIT", "60"))
    app.middleware(RateLimit(os.environ["LAMBDA_MCP_TABLE_NAME"], limit=limit, window_seconds=3600))


@app.tool()
def echo(text: str) -> str:
    """Say it back."""
    return text
