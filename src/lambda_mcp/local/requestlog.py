"""The dev servers' request log: one readable line per HTTP request on stderr, `POST /mcp 200 tools/call
add 3 ms` (method, path, status, MCP method, tool, time), from `lambda-mcp dev`, `dev --lambda` and
`lambda-mcp serve` outside Lambda.

Under `dev --lambda` the MCP method and tool come from the Lambda handler's own JSON request line
(observe/powertools.py), which `HandlerLog` holds back by its correlation id (the event's request id)
for the request that made it; with `--json-logs` the JSON lines are printed as CloudWatch gets them,
instead of the readable ones. Every other line the handlers write (warnings, errors, the worker's
task runs) passes through unchanged.
"""

from __future__ import annotations

import io
import json
import sys
import threading
from collections.abc import Mapping
from typing import IO, Any

_REQUEST_LINE = '{"level":"INFO","location":"lambda_mcp","message":"request",'
"""How the handler's request line starts (observe/powertools.py `_LINE_START`, then its message)."""
MAX_HELD = 1000
"""Request lines held at most (a line no request took, e.g. from an invocation that failed, is dropped)."""


def request_line(method: str, path: str, status: int, fields: Mapping[str, Any], elapsed_ms: float) -> str:
    """`METHOD PATH STATUS [MCP-METHOD [TOOL]] MS ms` (`-` for a status never sent)."""
    mcp = " ".join(str(fields[k]) for k in ("mcp_method", "tool_name") if fields.get(k))
    return f"{method} {path} {status or '-'}{' ' + mcp if mcp else ''} {elapsed_ms:.0f} ms"


def log_request(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


class HandlerLog(io.TextIOBase):
    """The stream the Lambda handlers' logger writes to under `dev --lambda`: request lines are held for
    `take` (and also printed with `json_logs`); any other line goes to `out` as it is."""

    def __init__(self, out: IO[str], *, json_logs: bool) -> None:
        self.out = out
        self.json_logs = json_logs
        self._partial = ""
        self._held: dict[str, dict[str, Any]] = {}
        self._lock = threading.Lock()

    def writable(self) -> bool:
        return True

    def write(self, text: str) -> int:
        with self._lock:
            lines = (self._partial + text).split("\n")
            self._partial = lines.pop()
            passed = [line for line in lines if not self._hold(line)]
        if passed:
            self.out.write("".join(line + "\n" for line in passed))
            self.out.flush()
        return len(text)

    def flush(self) -> None:
        self.out.flush()

    def _hold(self, line: str) -> bool:
        """Whether `line` is a request line kept back (it is held either way, and passes with `json_logs`)."""
        if not line.startswith(_REQUEST_LINE):
            return False
        try:
            found = json.loads(line)
        except ValueError:
            return False
        correlation = found.get("correlation_id")
        if isinstance(correlation, str):
            if len(self._held) >= MAX_HELD:
                self._held.pop(next(iter(self._held)))
            self._held[correlation] = found
        return not self.json_logs

    def take(self, correlation_id: str | None) -> dict[str, Any]:
        """The fields of the request line logged for `correlation_id` (empty when there was none)."""
        if correlation_id is None:
            return {}
        with self._lock:
            return self._held.pop(correlation_id, {})
