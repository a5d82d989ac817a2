"""Run an app under uvicorn with in-memory state and streaming responses (the embedded default)."""

from __future__ import annotations

from ..config import Settings
from ..kit import build_kit
from ..loader import load_app
from ..transport.app import create_app


def serve(target: str, host: str, port: int) -> None:
    import uvicorn

    kit = build_kit(load_app(target), Settings.from_env(), streaming=True, local=True)
    print(
        f"lambda-mcp dev: serving {kit.app.name} on http://{host}:{port}/mcp (in-memory state, streaming)", flush=True
    )
    uvicorn.run(create_app(kit), host=host, port=port, log_level="warning", timeout_graceful_shutdown=1)
