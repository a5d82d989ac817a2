"""AgentCore Gateway support outside the Lambda entrypoint: the tool-schema document a Lambda target is
created with (`schema`), and the gateway's constraints on tool names, descriptions and schemas (`constraints`)."""

from __future__ import annotations

from .constraints import agentcore_problems
from .schema import export, reduce_schema

__all__ = ["agentcore_problems", "export", "reduce_schema"]
