"""A stand-in for the API `tests/apps/openapi/petstore-3.1.json` describes, on 127.0.0.1 under `/v1`: it
records every request it gets (`received`) and answers each operation the way a real petstore would,
plus a 404 for an unknown pet, a 500 with a long body (`/boom`), a redirect (`/old-pets`), a slow answer
(`/slow`, `SLOW_SECONDS`), a PNG (`/pets/{id}/photo`) and plain text (`/health`, notes)."""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler
from typing import Any
from urllib.parse import parse_qsl, unquote, urlsplit

from .loopback import LoopbackServer, respond

PREFIX = "/v1"
PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(32))
SLOW_SECONDS = 3.0
REX = {"id": 1, "name": "Rex", "tag": "dog", "status": "available", "category": {"name": "dogs"}}


@dataclass(frozen=True)
class Seen:
    """One request as the API got it."""

    method: str
    path: str
    """Without `/v1` and the query, decoded (`segments`: decoded one by one)."""
    raw_path: str
    """As sent (percent-encoded), with the query."""
    query: list[tuple[str, str]]
    headers: dict[str, str]
    """Lower-case names."""
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)

    @property
    def segments(self) -> list[str]:
        """The path's segments after `/v1`, each decoded (an encoded `/` stays inside its segment)."""
        raw = urlsplit(self.raw_path).path
        raw = raw[len(PREFIX) :] if raw.startswith(PREFIX) else raw
        return [unquote(segment) for segment in raw.strip("/").split("/")]


class PetstoreAPI:
    def __init__(self) -> None:
        self.received: list[Seen] = []
        self._lock = threading.Lock()
        self._server = LoopbackServer(self._handle, ("GET", "POST", "PUT", "DELETE", "PATCH"))
        self.url = self._server.url
        self.base_url = self.url + PREFIX
        """What `base_url=` of `app.openapi` is for this API."""

    def stop(self) -> None:
        self._server.stop()

    def last(self) -> Seen:
        with self._lock:
            return self.received[-1]

    def _handle(self, handler: BaseHTTPRequestHandler) -> None:
        length = int(handler.headers.get("content-length") or 0)
        body = handler.rfile.read(length) if length else b""
        parts = urlsplit(handler.path)
        path = unquote(parts.path)
        path = path[len(PREFIX) :] if path.startswith(PREFIX) else path
        seen = Seen(
            handler.command,
            path,
            handler.path,
            parse_qsl(parts.query, keep_blank_values=True),
            {name.lower(): value for name, value in handler.headers.items()},
            body,
        )
        with self._lock:
            self.received.append(seen)
        status, answer, kind, headers = self._answer(seen)
        respond(handler, status, answer, kind, headers)

    def _answer(self, seen: Seen) -> tuple[int, bytes, str | None, list[tuple[str, str]]]:
        method, segments = seen.method, seen.segments
        route = (method, segments[0], len(segments), segments[-1] if len(segments) > 2 else "")
        if route[:3] == ("GET", "pets", 1):
            return _json(200, [REX])
        if route[:3] == ("POST", "pets", 1):
            return _json(201, {"id": 7, **seen.json()})
        if route[:3] == ("GET", "pets", 2) and segments[1] == "search":
            return _json(200, [REX])
        if route[:3] == ("GET", "pets", 2):
            if segments[1] == "1":
                return _json(200, REX)
            return _json(404, {"code": 404, "message": f"no pet {segments[1]}"})
        if route[:3] == ("PUT", "pets", 2):
            return _json(200, {"id": int(segments[1]) if segments[1].isdigit() else 0, **seen.json()})
        if route[:3] == ("DELETE", "pets", 2):
            return 204, b"", None, []
        if route == ("GET", "pets", 3, "photo"):
            return 200, PNG, "image/png", []
        if route == ("POST", "pets", 3, "notes"):
            return 200, b"noted", "text/plain; charset=utf-8", []
        if route == ("PUT", "pets", 3, "tags"):
            return _json(200, seen.json())
        if route == ("POST", "pets", 3, "move"):
            return _json(200, {"moved": True})
        if route[:3] == ("GET", "stores", 2):
            return _json(200, {"store": segments[1]})
        if route[:3] == ("GET", "trees", 2):
            return _json(200, {"value": "root", "children": [{"value": "leaf", "children": []}]})
        if route[:3] == ("GET", "health", 1):
            return 200, b"ok", "text/plain", []
        if route[:3] == ("GET", "boom", 1):
            return 500, ("Internal trouble. " * 400).encode(), "text/plain", []
        if route[:3] == ("GET", "slow", 1):
            time.sleep(SLOW_SECONDS)
            return _json(200, {"late": True})
        if route[:3] == ("GET", "old-pets", 1):
            return 302, b"", None, [("location", PREFIX + "/pets")]
        return _json(404, {"code": 404, "message": f"no route {method} {seen.path}"})


def _json(status: int, value: Any) -> tuple[int, bytes, str, list[tuple[str, str]]]:
    return status, json.dumps(value).encode(), "application/json", []
