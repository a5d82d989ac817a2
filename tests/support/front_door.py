"""A local front door for several handler processes: each request goes to the next one in turn.

It stands in for API Gateway in front of a Lambda fleet where no two consecutive requests reach
the same instance: with two upstreams, every follow-up (an answer POST, a resuming GET) lands on
the other process. Bodies are buffered both ways, as API Gateway does. Every exchange is
schema-checked by one `Recorder` (it sees the requests of all instances).
"""

from __future__ import annotations

import asyncio
import itertools
import secrets
import threading
from pathlib import Path

import httpx
import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from .polling import wait_until
from .processes import ServerProcess, free_port, lambda_mcp_dev
from .recorder import Recorder

_HOP_BY_HOP = {"connection", "keep-alive", "transfer-encoding", "content-length", "content-encoding"}


class FrontDoor:
    def __init__(self, upstreams: list[str], violations: Path) -> None:
        self.upstreams = upstreams
        self.violations = violations
        """Schema violations are appended here, one per line."""
        self.hits: list[int] = []
        """Which upstream served each request, in arrival order."""
        self.recorder = Recorder()
        self._turn = itertools.count()
        self._lock = threading.Lock()
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}/mcp"
        app = Starlette(routes=[Route("/{path:path}", self._forward, methods=["GET", "POST", "DELETE"])])
        self._server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=self.port, log_level="warning"))
        self._thread = threading.Thread(target=self._server.run, daemon=True)
        self._thread.start()
        wait_until(lambda: self._server.started, what="the front door to start")

    async def _forward(self, request: Request) -> Response:
        with self._lock:
            index = next(self._turn) % len(self.upstreams)
            self.hits.append(index)
        body = await request.body()
        headers = {k: v for k, v in request.headers.items() if k.lower() not in _HOP_BY_HOP}
        async with httpx.AsyncClient(timeout=120) as client:
            upstream = await client.request(request.method, self.upstreams[index], content=body, headers=headers)
        response_headers = {k: v for k, v in upstream.headers.items() if k.lower() not in _HOP_BY_HOP}
        lowered = {k.lower(): v for k, v in request.headers.items()}
        await asyncio.to_thread(self._record, lowered, body, upstream.status_code, response_headers, upstream.content)
        return Response(upstream.content, status_code=upstream.status_code, headers=response_headers)

    def _record(
        self, headers: dict[str, str], body: bytes, status: int, response_headers: dict[str, str], data: bytes
    ) -> None:
        with self._lock:
            before = len(self.recorder.violations)
            self.recorder.exchange(headers, body, status, {k.lower(): v for k, v in response_headers.items()}, data)
            if len(self.recorder.violations) > before:
                with self.violations.open("a", encoding="utf-8") as out:
                    out.writelines(v.replace("\n", " ") + "\n" for v in self.recorder.violations[before:])

    def stop(self) -> None:
        self._server.should_exit = True
        self._thread.join(timeout=10)


class LambdaPair:
    """Two `dev --lambda` processes on one table and one task queue, behind a `FrontDoor`."""

    def __init__(
        self, target: str, work: Path, dynamodb: str, sqs: str, violations: Path, env: dict[str, str] | None = None
    ) -> None:
        table = self.table = f"pair-{secrets.token_hex(4)}"
        # every instance seals requestState with one key, and serves the door's host (as a Lambda
        # behind API Gateway serves the API's domain, not its own)
        env = {
            "LAMBDA_MCP_STATE_KEY": "shared-by-every-instance",
            "LAMBDA_MCP_ALLOWED_HOSTS": "127.0.0.1:*",
            "LAMBDA_MCP_ALLOWED_ORIGINS": "http://127.0.0.1:*",
            **(env or {}),
        }
        self.processes: list[ServerProcess] = []
        try:
            for index in range(2):
                self.processes.append(
                    lambda_mcp_dev(
                        target,
                        through_lambda=True,
                        log=work / f"server-{index}.log",
                        aws_endpoint=dynamodb,
                        extra_args=["--sqs-endpoint", sqs, "--table", table],
                        env=env,
                    )
                )
            self.door = FrontDoor([p.url for p in self.processes], violations)
        except Exception:
            self.stop()
            raise
        self.url = self.door.url

    def output(self) -> str:
        return "\n".join(p.output() for p in self.processes)

    def stop(self) -> None:
        if hasattr(self, "door"):
            self.door.stop()
        for process in self.processes:
            process.stop()
