"""The HTTP Lambda handler: API Gateway (REST v1, HTTP API v2) and Function URL events via Mangum."""

from __future__ import annotations

from mangum import Mangum

from ..config import require_auth_choice
from ._kit import lambda_kit, lambda_observer, register_snapstart_hooks
from ._loop import start_lifespan

register_snapstart_hooks(__name__)  # SnapStart's runtime hooks, before the app's own (where the runtime has them)
require_auth_choice()  # LAMBDA_MCP_AUTH: jwt, gateway, or none for a public endpoint
kit = lambda_kit()
kit.access.guard  # noqa: B018 (build the auth guard now: a bad setting fails the cold start, not a request)
app = kit.asgi()
start_lifespan(kit.app.lifespans)  # process-wide resources: at cold start, on the loop every invocation uses
serve = Mangum(app, lifespan="off")
"""The request handler without the observer: what SnapStart's priming request goes through (_snapstart.py)."""
handler = lambda_observer().http(serve)
"""Each request: one JSON log line (correlation id = the API's request id) and its metrics (EMF)."""
