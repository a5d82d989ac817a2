"""Pure MCP wire vocabulary: versions, error codes, JSON-RPC envelopes and content models, and the value
classes the kit's records and messages are built on (`values.py`).

Nothing here imports the rest of the kit, Starlette or boto3.
"""
