"""`app.mount`: another MCP server's tools, resources and prompts served under a prefix: another `MCPApp`
in this process (`local.py`), or a remote Streamable HTTP endpoint of either protocol era (`remote.py`,
speaking through `client.py` and passing a call's progress, logs and input requests through with
`passthrough.py`); how names and URIs are prefixed is `names.py`."""
