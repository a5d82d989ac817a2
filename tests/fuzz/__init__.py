"""Hypothesis fuzzing of the `/mcp` endpoint through the Lambda handler and the streaming server."""
