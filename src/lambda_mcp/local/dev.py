"""Run an app under uvicorn with in-memory state and streaming responses (the embedded default)."""

from __future__ import annotations

from ..config import Settings
from ..kit import build_kit
from ..loader import load_app


def serve(target: str, host: str, port: int) -> None:
    import uvicorn

    settings = Settings.from_env(default_auth="none")
    kit = build_kit(load_app(target), settings, streaming=True, local=True)
    state = f"state in DynamoDB table {settings.table_name}" if settings.table_name else "in-memory state"
    print(f"lambda-mcp dev: serving {kit.app.name} on http://{host}:{port}/mcp ({state}, streaming)", flush=True)
    uvicorn.run(kit.asgi(), host=host, port=port, log_level="warning", timeout_graceful_shutdown=1)
