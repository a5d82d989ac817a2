"""An app serving the three kinds of tools a team already has, importing nothing but `lambda_mcp` (the
runtime-only venv runs it): an OpenAPI document in YAML (`EXISTING_SPEC`, calling `EXISTING_API`), a
mounted MCP server (`EXISTING_VENDOR`) and a Lambda function (`resizer`, at `AWS_ENDPOINT_URL_LAMBDA`)."""

from __future__ import annotations

import os

from lambda_mcp import MCPApp

app = MCPApp("existing")
app.openapi(os.environ["EXISTING_SPEC"], base_url=os.environ["EXISTING_API"], tags=["pets"])
app.mount(os.environ["EXISTING_VENDOR"], prefix="vendor")
app.lambda_tool("resize", function="resizer", description="Double a width.")
