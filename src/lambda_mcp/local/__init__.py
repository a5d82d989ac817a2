"""`lambda-mcp dev`: the local servers (uvicorn streaming, and the API Gateway emulation for `--lambda`)."""
