"""`lambda-mcp export FORMAT ...`: write an app's tools in another system's format. One format so far:
`agentcore` (an Amazon Bedrock AgentCore Gateway Lambda target's tool schema, `agentcore.schema`)."""

from __future__ import annotations

import sys


def main(argv: list[str]) -> int:
    if argv[:1] == ["agentcore"]:
        from .agentcore.schema import main as agentcore

        return agentcore(argv[1:])
    print("usage: lambda-mcp export agentcore APP [--target NAME] [-o FILE]", file=sys.stderr)
    return 2
