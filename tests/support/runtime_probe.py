"""Invoke one of the kit's Lambda entrypoints with the events on stdin and print what happened as JSON,
with nothing but the standard library and `lambda_mcp`: run by a venv that holds only a deployment's
dependencies.

`python runtime_probe.py MODULE < events.json` imports `lambda_mcp.entrypoints.MODULE` (its cold start,
configured by the `LAMBDA_MCP_*` variables), calls its `handler` with each event of the JSON list in turn
and prints, as its last line (the handlers log before it), `{"answers": [...], "imported": [...], "kit":
path}`: each handler's return value, or the exception it raised as `{"raised": "Type: message"}`; which
of the optional packages are now imported; and where `lambda_mcp` was imported from.
"""

from __future__ import annotations

import importlib
import json
import sys
from typing import Any

import lambda_mcp
from lambda_mcp.local.context import LambdaContext

OPTIONAL = ("aws_xray_sdk", "boto3", "cryptography", "jwt")


def _answer(handler: Any, event: dict[str, Any]) -> Any:
    try:
        return handler(event, LambdaContext())
    except Exception as exc:  # the probe reports it; the test decides whether it was expected
        return {"raised": f"{type(exc).__name__}: {exc}"}


def main(module: str) -> None:
    events = json.load(sys.stdin)
    handler = importlib.import_module(f"lambda_mcp.entrypoints.{module}").handler
    answers = [_answer(handler, event) for event in events]
    imported = [name for name in OPTIONAL if name in sys.modules]
    print(json.dumps({"answers": answers, "imported": imported, "kit": lambda_mcp.__file__}))


if __name__ == "__main__":
    main(sys.argv[1])
