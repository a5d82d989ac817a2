"""The API routes AWS SAM CLI discovers in a template, as `sam local start-api` would serve them.

Runs on the SAM CLI's own Python (`.cache/samcli/bin/python tests/infra/sam_routes.py`), not the project's:
reads a JSON list of {"template": path, "parameters": {name: value}} on stdin and prints, for each, the
routes SAM CLI's providers find (SamLocalStackProvider, then ApiProvider) as a JSON list of
{"path", "methods", "function", "event_type"}, or {"error": message} when discovery fails. One process for
every combination, because importing SAM CLI takes seconds. tests/infra/test_sam_cli.py runs it.
"""

from __future__ import annotations

import json
import sys
from typing import Any


def routes(template: str, parameters: dict[str, str]) -> list[dict[str, Any]] | dict[str, str]:
    from samcli.lib.providers.api_provider import ApiProvider
    from samcli.lib.providers.sam_stack_provider import SamLocalStackProvider

    try:
        stacks, _ = SamLocalStackProvider.get_stacks(template, parameter_overrides=parameters)
        found = ApiProvider(stacks).routes
    except Exception as exc:  # reported to the test, which shows it
        return {"error": f"{type(exc).__name__}: {exc}"}
    return [
        {"path": r.path, "methods": sorted(r.methods), "function": r.function_name, "event_type": r.event_type}
        for r in found
    ]


def main() -> int:
    combinations = json.load(sys.stdin)
    print(json.dumps([routes(c["template"], c["parameters"]) for c in combinations]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
