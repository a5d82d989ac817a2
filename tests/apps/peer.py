"""A Lambda HTTP handler for the source-address tests: Mangum (as the kit's handler uses it) around an ASGI app
that answers every request with the caller's address as the ASGI scope's `client` has it, the `sourceIp` of
the event the front door built, and the path."""

from __future__ import annotations

import json
from collections.abc import MutableMapping
from typing import Any

from mangum import Mangum
from mangum.types import Receive, Send


async def app(scope: MutableMapping[str, Any], receive: Receive, send: Send) -> None:
    context = scope["aws.event"]["requestContext"]
    source = (context.get("http") or context.get("identity") or {}).get("sourceIp")
    client = scope.get("client")
    seen = {"client": client[0] if client else None, "sourceIp": source, "path": scope["path"]}
    await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"application/json")]})
    await send({"type": "http.response.body", "body": json.dumps(seen).encode()})


handler = Mangum(app, lifespan="off")
