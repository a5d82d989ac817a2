"""Pure MCP wire vocabulary: versions, error codes, JSON-RPC envelopes and content models.

Nothing here imports the rest of the kit, Starlette or boto3.
"""
