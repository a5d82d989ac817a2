"""The REST API's Lambda authorizer (`TOKEN`): bearer tokens checked like auth `jwt`, before the function.

Deployed as `lambda_mcp.entrypoints.authorizer.handler` with the HTTP function's `LAMBDA_MCP_AUTH_*`
settings (template.yaml, `ApiType=REST`, `AuthMode=jwt`). It needs no app.
"""

from __future__ import annotations

import asyncio
from typing import Any

from ..auth.authorizer import authorize
from ..auth.guard import BearerGuard, guard_for
from ..config import ConfigError, Settings

_settings = Settings.from_env()
if _settings.auth == "proxy":  # the authorization facade's own tokens
    from ..facade.resource_guard import token_guard

    _guard: object = token_guard(_settings)
else:
    _guard = guard_for(_settings)
if not isinstance(_guard, BearerGuard):
    raise ConfigError("the authorizer needs LAMBDA_MCP_AUTH=jwt (and LAMBDA_MCP_AUTH_ISSUER) or proxy")
guard: BearerGuard = _guard


def handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
    return asyncio.run(authorize(guard, event))
