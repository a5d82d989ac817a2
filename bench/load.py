"""Load benchmark: N concurrent clients on each wire against `lambda-mcp dev` with state on DynamoDB Local.

Prints figures; it is not a test (the test suite never runs it). For each server,

* `dev --aws local`: the streaming server (uvicorn, concurrent requests), and
* `dev --lambda --aws local`: the real buffered Lambda handler (one request at a time, as an
  execution environment serves them),

it runs `--clients` legacy clients (2025-11-25 sessions: initialize, then `tools/call`s carrying the
session id) and then as many 2026-07-28 clients (stateless `tools/call`s), each sending `--calls`
calls of the read-only tool `add` of `bench/apps/lambda_mcp_app.py`, and prints calls/s, p50 and p99
per wire. Both servers use one DynamoDB Local started here; every process listens on 127.0.0.1 and
is stopped by its PID at the end, also on failure. Exit status 1 on any error (transport failure,
HTTP status other than 200, JSON-RPC error or wrong result).

    .venv/bin/python bench/load.py [--clients 8] [--calls 300] [--warmup 20]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
from _local import start_dynamodb_local  # bench/, the script's own directory

ROOT = Path(__file__).resolve().parent.parent
APP = "bench/apps/lambda_mcp_app.py"
LEGACY, MODERN = "2025-11-25", "2026-07-28"
ACCEPT = "application/json, text/event-stream"
META = {"io.modelcontextprotocol/protocolVersion": MODERN, "io.modelcontextprotocol/clientCapabilities": {}}


class LoadError(Exception):
    """A call that did not answer `3`: the run stops and says which."""


@dataclass
class Figures:
    latencies: list[float] = field(default_factory=list)
    wall: float = 0.0

    def row(self, label: str) -> str:
        ordered = sorted(self.latencies)
        p99 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]
        return (
            f"   {label:28} {len(ordered):6d} calls {self.rate:8.1f} calls/s"
            f"   p50 {statistics.median(ordered) * 1e3:7.1f} ms   p99 {p99 * 1e3:7.1f} ms"
        )

    @property
    def rate(self) -> float:
        return len(self.latencies) / self.wall


def _answer(response: httpx.Response) -> dict[str, Any]:
    """The JSON-RPC response in a JSON or SSE body."""
    if response.status_code != 200:
        raise LoadError(f"HTTP {response.status_code}: {response.text[:300]}")
    if response.headers.get("content-type", "").startswith("text/event-stream"):
        for line in response.text.splitlines():
            if line.startswith("data:") and '"id"' in line:
                message: dict[str, Any] = json.loads(line[5:])
                if "result" in message or "error" in message:
                    return message
        raise LoadError(f"no response in the stream: {response.text[:300]}")
    answered: dict[str, Any] = response.json()
    return answered


def _check(message: dict[str, Any]) -> None:
    content = (message.get("result") or {}).get("content") or [{}]
    if content[0].get("text") != "3":
        raise LoadError(f"unexpected answer: {json.dumps(message)[:300]}")


class Client:
    """One client on one connection pool: a legacy session or a stateless 2026 caller."""

    def __init__(self, url: str, wire: str) -> None:
        self.url, self.wire = url, wire
        self.http = httpx.AsyncClient(timeout=60.0)
        self.session_id: str | None = None
        self.next_id = 1

    async def open(self) -> None:
        if self.wire == "legacy":
            info = {"name": "lambda-mcp-load", "version": "1"}
            params = {"protocolVersion": LEGACY, "capabilities": {}, "clientInfo": info}
            body = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": params}
            response = await self.http.post(self.url, json=body, headers={"accept": ACCEPT})
            _answer(response)
            self.session_id = response.headers["mcp-session-id"]
            done = await self.http.post(
                self.url, json={"jsonrpc": "2.0", "method": "notifications/initialized"}, headers=self._headers()
            )
            if done.status_code != 202:
                raise LoadError(f"notifications/initialized: HTTP {done.status_code}")

    def _headers(self) -> dict[str, str]:
        if self.wire == "legacy":
            assert self.session_id is not None
            return {"accept": ACCEPT, "mcp-session-id": self.session_id, "mcp-protocol-version": LEGACY}
        return {"accept": ACCEPT, "mcp-protocol-version": MODERN, "mcp-method": "tools/call", "mcp-name": "add"}

    async def call(self) -> float:
        params: dict[str, Any] = {"name": "add", "arguments": {"a": 1, "b": 2}}
        if self.wire == "modern":
            params["_meta"] = META
        body = {"jsonrpc": "2.0", "id": self.next_id, "method": "tools/call", "params": params}
        self.next_id += 1
        started = time.perf_counter()
        try:
            response = await self.http.post(self.url, json=body, headers=self._headers())
        except httpx.HTTPError as exc:
            raise LoadError(f"transport: {exc!r}") from exc
        _check(_answer(response))
        return time.perf_counter() - started

    async def close(self) -> None:
        await self.http.aclose()


async def run_wire(url: str, wire: str, clients: int, calls: int, warmup: int) -> Figures:
    """`clients` clients at once, each sending `calls` timed calls after `warmup` untimed ones."""
    pool = [Client(url, wire) for _ in range(clients)]
    figures = Figures()
    try:
        await asyncio.gather(*(c.open() for c in pool))
        await asyncio.gather(*(c.call() for c in pool for _ in range(max(1, warmup // clients))))

        async def drive(client: Client) -> None:
            for _ in range(calls):
                figures.latencies.append(await client.call())

        started = time.perf_counter()
        await asyncio.gather(*(drive(c) for c in pool))
        figures.wall = time.perf_counter() - started
    finally:
        await asyncio.gather(*(c.close() for c in pool))
    return figures


def start_servers(stack: contextlib.ExitStack) -> dict[str, str]:
    """DynamoDB Local and both dev servers on it; each stopped by `stack`."""
    sys.path.insert(0, str(ROOT))  # tests.support
    from tests.support.processes import lambda_mcp_dev

    dynamodb = start_dynamodb_local(stack)
    logs = Path(tempfile.mkdtemp(prefix="lambda-mcp-load-"))
    urls = {}
    for label, through_lambda in (("dev --aws local", False), ("dev --lambda --aws local", True)):
        table = "load-lambda" if through_lambda else "load-streaming"
        server = lambda_mcp_dev(
            APP,
            through_lambda=through_lambda,
            aws_endpoint=dynamodb,
            extra_args=["--table", table],
            log=logs / f"{table}.log",
            env={"LAMBDA_MCP_AUTH": "none", "LAMBDA_MCP_LOG_LEVEL": "WARNING"},
        )
        stack.callback(server.stop)
        urls[label] = server.url
    print(f"   DynamoDB Local at {dynamodb}; server logs in {logs}")
    return urls


async def bench(args: argparse.Namespace, urls: dict[str, str]) -> dict[str, dict[str, Figures]]:
    results: dict[str, dict[str, Figures]] = {}
    for label, url in urls.items():
        results[label] = {}
        for wire in ("legacy", "modern"):
            try:
                results[label][wire] = await run_wire(url, wire, args.clients, args.calls, args.warmup)
            except LoadError as exc:
                raise LoadError(f"{label}, {wire} wire: {exc}") from exc
    return results


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", type=int, default=8, help="concurrent clients per wire (default 8)")
    parser.add_argument("--calls", type=int, default=300, help="timed calls per client (default 300)")
    parser.add_argument("--warmup", type=int, default=20, help="untimed calls per wire first (default 20)")
    args = parser.parse_args()
    for name, value in {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing"}.items():
        os.environ.setdefault(name, value)
    os.environ.setdefault("AWS_DEFAULT_REGION", "us-east-1")
    print(__doc__.splitlines()[0])
    print(
        f"   {args.clients} clients per wire x {args.calls} tools/call each; app {APP}; python {sys.version.split()[0]}"
    )
    with contextlib.ExitStack() as stack:
        urls = start_servers(stack)
        try:
            results = asyncio.run(bench(args, urls))
        except LoadError as exc:
            print(f"FAILED: {exc}")
            return 1
    for label, wires in results.items():
        print(f"== {label}")
        print(wires["legacy"].row("legacy (2025-11-25 session)"))
        print(wires["modern"].row("2026-07-28 (stateless)"))
        share = wires["legacy"].rate / wires["modern"].rate
        print(f"   legacy / 2026 throughput: {share:.2f}")
    streaming = results["dev --aws local"]
    met = streaming["legacy"].rate >= 0.5 * streaming["modern"].rate
    goal = f"dev --aws local: legacy >= half of 2026 with {args.clients} clients, no errors"
    print(f"goal ({goal}): {'met' if met else 'NOT met'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
