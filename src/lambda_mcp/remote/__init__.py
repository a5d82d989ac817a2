"""`lambda-mcp call` and `lambda-mcp list`: a command-line MCP client for any Streamable HTTP endpoint.

It speaks both protocol eras (2026-07-28 per-request `_meta`, or a legacy `initialize` session), signs
requests with SigV4 when asked, and asks elicitations on the terminal. Nothing here is imported by the
server: the Lambda request path never loads it.
"""
