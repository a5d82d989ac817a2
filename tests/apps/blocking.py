"""A test app for concurrency: a sync tool that blocks its thread, a quick one, and a slow sync task."""

from __future__ import annotations

import threading
import time

from lambda_mcp import MCPApp

app = MCPApp("blocking", version="1.0.0")
BLOCKING = threading.Event()
"""Set while `blocking` holds its thread (what a test waits for before it sends the next request)."""


@app.tool()
def blocking(seconds: float) -> str:
    """Blocks its thread for `seconds` (a sync tool doing I/O the old way)."""
    BLOCKING.set()
    time.sleep(seconds)
    return "slept"


@app.tool()
def quick() -> str:
    return "quick"


@app.tool(task_support="optional")
def slow_job(seconds: float) -> str:
    """A sync task that blocks for `seconds`."""
    time.sleep(seconds)
    return f"done after {seconds}s"
