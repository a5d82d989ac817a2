"""JSON-RPC dispatch: one MCP message in, one outcome out, for either protocol era.

Knows MCP methods; knows nothing about HTTP or AWS. `dispatcher.py` is the single place where
exceptions become JSON-RPC errors.
"""
