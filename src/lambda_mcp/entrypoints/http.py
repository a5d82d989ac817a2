"""The HTTP Lambda handler: API Gateway (REST v1, HTTP API v2) and Function URL events via Mangum."""

from __future__ import annotations

from mangum import Mangum

from ..config import Settings
from ..kit import build_kit
from ..loader import load_app
from ..transport.app import create_app

_settings = Settings.from_env()
if not _settings.app:
    raise RuntimeError("set LAMBDA_MCP_APP to the app to serve, e.g. app.py:app")
kit = build_kit(load_app(_settings.app), _settings, streaming=False)
app = create_app(kit)
handler = Mangum(app, lifespan="off")
