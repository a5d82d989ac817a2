"""`lambda-mcp call`, `list`, `read` and `prompt`: a command-line MCP client for any Streamable HTTP endpoint.

It speaks both protocol eras (2026-07-28 per-request `_meta`, or a legacy `initialize` session), types
`key=value` arguments by the tool's schema, shows progress and log messages on stderr, signs requests
with SigV4 or signs in with a browser (`--login`, OAuth) when asked, and asks elicitations on the
terminal. Nothing here is imported by the server: the Lambda request path never loads it.
"""
