"""The Lambda events of `events/` (the repository's, also `lambda-mcp invoke`'s and `sam local invoke`'s),
loaded and fed to a handler the way Lambda would, with every exchange schema-checked."""

from __future__ import annotations

import base64
import json
from collections.abc import Callable
from typing import Any

from lambda_mcp.local.context import LambdaContext

from .processes import ROOT
from .recorder import Recorder

EVENTS = ROOT / "events"
Handler = Callable[[dict[str, Any], Any], dict[str, Any]]


def load_event(source: str, name: str, session: str | None = None) -> dict[str, Any]:
    """`events/<source>/<name>.json`, its session placeholder filled in when `session` is given."""
    text = (EVENTS / source / f"{name}.json").read_text()
    if session is not None:
        text = text.replace("REPLACE_WITH_SESSION_ID", session)
    event: dict[str, Any] = json.loads(text)
    return event


def body_of(response: dict[str, Any]) -> str:
    """A Lambda HTTP response's body as text (Base64-decoded when it says so)."""
    raw = response.get("body") or ""
    return base64.b64decode(raw).decode() if response.get("isBase64Encoded") else str(raw)


def invoke(
    handler: Handler, event: dict[str, Any], recorder: Recorder
) -> tuple[int, dict[str, str], list[dict[str, Any]]]:
    """Status, headers and the schema-checked messages of one event through `handler`."""
    response = handler(event, LambdaContext())
    headers = {k.lower(): str(v) for k, v in (response.get("headers") or {}).items()}
    request_headers = {k.lower(): v for k, v in (event.get("headers") or {}).items()}
    messages = recorder.exchange(
        request_headers, (event.get("body") or "").encode(), response["statusCode"], headers, body_of(response).encode()
    )
    return response["statusCode"], headers, messages
