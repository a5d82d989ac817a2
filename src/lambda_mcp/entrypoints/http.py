"""The HTTP Lambda handler: API Gateway (REST v1, HTTP API v2) and Function URL events via Mangum."""

from __future__ import annotations

from mangum import Mangum

from ..transport.app import create_app
from ._kit import lambda_kit

kit = lambda_kit()
app = create_app(kit)
handler = Mangum(app, lifespan="off")
