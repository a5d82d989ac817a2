"""Run `lambda-mcp serve` (the production streaming server) with every response checked against the
official schemas, as tests/support/validating_server.py does for `lambda-mcp dev`.

Usage: python tests/conformance/validating_serve.py TARGET (settings, port: the environment, as in
Lambda); violations are appended to the file named by LAMBDA_MCP_TEST_VIOLATIONS.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from lambda_mcp import serving  # noqa: E402
from tests.support.validating_server import ValidatingMiddleware  # noqa: E402


class _Validated(serving.FromAdapter):
    """`serve`'s own middleware, over the schema-checking one."""

    def __init__(self, app: Any, **options: Any) -> None:
        super().__init__(ValidatingMiddleware(app), **options)


if __name__ == "__main__":
    serving.FromAdapter = _Validated  # type: ignore[misc]
    serving.serve(sys.argv[1])
