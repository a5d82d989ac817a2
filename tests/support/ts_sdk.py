"""Run the official TypeScript MCP SDK's OAuth client (tests/support/ts_oauth_client.mjs) against an MCP
server, answering its authorization requests from Python: the script prints the authorization URL, the
test signs the user in (tests/support/upstream.py `sign_in`) and writes back the redirect it reached."""

from __future__ import annotations

import json
import shutil
import subprocess
import threading
from collections.abc import Callable
from typing import Any

import pytest

from .processes import ROOT
from .upstream import NODE

TS_SDK = ROOT / ".cache/ts-sdk"
SCRIPT = ROOT / "tests/support/ts_oauth_client.mjs"


def run_ts_client(
    mcp_url: str,
    redirect_uri: str,
    tool: str,
    authorize: Callable[[str], str],
    timeout: float = 90,
    client_metadata_url: str = "",
) -> dict[str, Any]:
    """The script's final report; `authorize(url)` returns the redirect the user reached. With
    `client_metadata_url` the SDK signs in with that client ID metadata document instead of registering.
    The script is killed after `timeout` seconds."""
    if not NODE.exists() or not (TS_SDK / "node_modules/@modelcontextprotocol/sdk").exists():
        pytest.fail("the TypeScript MCP SDK is not installed: run ./scripts/test (it installs it into .cache/ts-sdk)")
    shutil.copy(SCRIPT, TS_SDK / SCRIPT.name)  # ESM resolves the SDK from the script's folder
    process = subprocess.Popen(
        [str(NODE), SCRIPT.name, mcp_url, redirect_uri, tool, *([client_metadata_url] if client_metadata_url else [])],
        cwd=TS_SDK,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert process.stdin is not None and process.stdout is not None
    watchdog = threading.Timer(timeout, process.kill)
    watchdog.start()
    try:
        messages: list[dict[str, Any]] = []
        for line in process.stdout:
            message = json.loads(line)
            messages.append(message)
            if "authorize" in message:
                process.stdin.write(authorize(message["authorize"]) + "\n")
                process.stdin.flush()
            elif "done" in message:
                return dict(message["done"])
            elif "error" in message:
                break
        process.wait(timeout=10)
        stderr = process.stderr.read() if process.stderr else ""
        raise AssertionError(f"the TypeScript client failed: {messages} {stderr[-3000:]}")
    finally:
        watchdog.cancel()
        if process.poll() is None:
            process.kill()
            process.wait(timeout=5)
        for stream in (process.stdin, process.stdout, process.stderr):
            if stream is not None:
                stream.close()
