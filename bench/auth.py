"""Benchmark what auth `jwt` costs: at cold start, and per warm request with the issuer's keys cached.

Prints figures; it is not a test. Everything is local: a loopback issuer (OpenID metadata + JWKS over
HTTP, as tests/support/issuer.py) signs RS256 tokens for the benchmark app.

* cold init: fresh processes, alternating `LAMBDA_MCP_AUTH=none` and `jwt`, timing the import of
  `lambda_mcp.entrypoints.http` (which builds the auth guard, so `jwt` imports PyJWT and cryptography)
  plus the first `tools/call` (for `jwt`, that first call also fetches the metadata and the JWKS);
* warm validation: `TokenValidator.validate` on one token, keys cached (the per-request cost);
* warm request: `tools/call` through the Mangum handler with and without a token (the difference is
  what a warm request pays for auth, header parsing and challenge logic included).

Usage: python bench/auth.py [--cold-runs N] [--validations N] [--requests N]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
REPO = BENCH.parent
sys.path[:0] = [str(REPO / "src"), str(REPO)]

from tests.support.issuer import LocalIssuer  # noqa: E402  (the tests' loopback issuer)

APP = f"{BENCH / 'apps/lambda_mcp_app.py'}:app"
DOMAIN = "abc123defg.execute-api.us-east-1.amazonaws.com"
RESOURCE = f"https://{DOMAIN}/mcp"
CALL = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "add", "arguments": {"a": 1, "b": 2}}}
META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
}

COLD = """
import json, time, sys
started = time.perf_counter()
from lambda_mcp.entrypoints.http import handler
imported = time.perf_counter()
response = handler(json.loads(sys.argv[1]), None)
assert response["statusCode"] == 200 and '"text":"3"' in response["body"], response
print(json.dumps({"import_ms": (imported - started) * 1000, "first_ms": (time.perf_counter() - started) * 1000}))
"""


def event(token: str | None) -> dict[str, Any]:
    body = {**CALL, "params": {**CALL["params"], "_meta": META}}  # type: ignore[dict-item]
    headers = {
        "host": DOMAIN,
        "content-type": "application/json",
        "accept": "application/json, text/event-stream",
        "mcp-protocol-version": "2026-07-28",
        "mcp-method": "tools/call",
        "mcp-name": "add",
    }
    if token is not None:
        headers["authorization"] = f"Bearer {token}"
    return {
        "version": "2.0",
        "routeKey": "$default",
        "rawPath": "/mcp",
        "rawQueryString": "",
        "headers": headers,
        "requestContext": {
            "accountId": "123456789012",
            "apiId": "abc123defg",
            "domainName": DOMAIN,
            "http": {"method": "POST", "path": "/mcp", "protocol": "HTTP/1.1", "sourceIp": "127.0.0.1"},
            "requestId": "bench",
            "routeKey": "$default",
            "stage": "$default",
        },
        "body": json.dumps(body),
        "isBase64Encoded": False,
    }


def environment(mode: str, issuer: LocalIssuer) -> dict[str, str]:
    env = {
        **os.environ,
        "PYTHONPATH": str(REPO / "src"),
        "LAMBDA_MCP_APP": APP,
        "LAMBDA_MCP_AUTH": mode,
        "AWS_REGION": "us-east-1",
        "AWS_ACCESS_KEY_ID": "bench",
        "AWS_SECRET_ACCESS_KEY": "bench",
    }
    if mode == "jwt":
        env |= {"LAMBDA_MCP_AUTH_ISSUER": issuer.url, "LAMBDA_MCP_AUTH_AUDIENCE": RESOURCE}
    return env


def cold(issuer: LocalIssuer, runs: int) -> dict[str, list[dict[str, float]]]:
    token = issuer.token(RESOURCE)
    results: dict[str, list[dict[str, float]]] = {"none": [], "jwt": []}
    for _ in range(runs):
        for mode in ("none", "jwt"):
            probe = event(token if mode == "jwt" else None)
            done = subprocess.run(
                [sys.executable, "-c", COLD, json.dumps(probe)],
                capture_output=True,
                text=True,
                env=environment(mode, issuer),
                timeout=60,
                check=True,
            )
            results[mode].append(json.loads(done.stdout.strip().splitlines()[-1]))
    return results


def warm_validation(issuer: LocalIssuer, count: int) -> list[float]:
    from lambda_mcp.auth.issuer import Issuer
    from lambda_mcp.auth.tokens import TokenValidator

    validator = TokenValidator(Issuer(issuer.url))
    token = issuer.token(RESOURCE)

    async def run() -> list[float]:
        await validator.validate(token, RESOURCE)  # fetches metadata and keys once
        timings = []
        for _ in range(count):
            started = time.perf_counter()
            await validator.validate(token, RESOURCE)
            timings.append((time.perf_counter() - started) * 1_000_000)
        return timings

    return asyncio.run(run())


def warm_requests(issuer: LocalIssuer, count: int) -> dict[str, list[float]]:
    import asyncio as _asyncio

    from mangum import Mangum

    from lambda_mcp.config import Settings
    from lambda_mcp.kit import build_kit
    from lambda_mcp.loader import load_app

    _asyncio.set_event_loop(_asyncio.new_event_loop())
    app = load_app(APP)
    jwt_settings = Settings(auth="jwt", auth_issuer=issuer.url, auth_audience=RESOURCE)
    handlers = {
        "none": Mangum(build_kit(app, Settings(), streaming=False).asgi(), lifespan="off"),
        "jwt": Mangum(build_kit(app, jwt_settings, streaming=False).asgi(), lifespan="off"),
    }
    events = {"none": event(None), "jwt": event(issuer.token(RESOURCE))}
    timings: dict[str, list[float]] = {"none": [], "jwt": []}
    for mode in handlers:  # warm both up (the jwt one fetches its keys here)
        for _ in range(20):
            assert handlers[mode](events[mode], None)["statusCode"] == 200
    for _ in range(count):
        for mode in ("none", "jwt"):
            started = time.perf_counter()
            response = handlers[mode](events[mode], None)
            timings[mode].append((time.perf_counter() - started) * 1000)
            if response["statusCode"] != 200 or '"text":"3"' not in response["body"]:
                raise SystemExit(f"unexpected response in {mode} mode: {response}")
    return timings


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cold-runs", type=int, default=7)
    parser.add_argument("--validations", type=int, default=2000)
    parser.add_argument("--requests", type=int, default=500)
    args = parser.parse_args()
    issuer = LocalIssuer()
    try:
        runs = cold(issuer, args.cold_runs)
        print(f"cold init, median of {args.cold_runs} alternating runs (import of the entrypoint; + first call)")
        for mode, samples in runs.items():
            imported = statistics.median(s["import_ms"] for s in samples)
            first = statistics.median(s["first_ms"] for s in samples)
            print(f"  auth {mode:<4}  import {imported:7.1f} ms   import + first call {first:7.1f} ms")
        extra_import = statistics.median(s["import_ms"] for s in runs["jwt"]) - statistics.median(
            s["import_ms"] for s in runs["none"]
        )
        extra_first = statistics.median(s["first_ms"] for s in runs["jwt"]) - statistics.median(
            s["first_ms"] for s in runs["none"]
        )
        print(f"  jwt adds {extra_import:.1f} ms to the import and {extra_first:.1f} ms to import + first call")
        print("  (the first call also fetches the issuer's metadata and JWKS, here over loopback)")

        validations = warm_validation(issuer, args.validations)
        quantiles = statistics.quantiles(validations, n=100)
        median = statistics.median(validations)
        print(
            f"warm token validation, keys cached ({args.validations} runs): median {median:.0f} us,"
            f" p90 {quantiles[89]:.0f} us, p99 {quantiles[98]:.0f} us (goal: under 1000 us)"
        )

        requests = warm_requests(issuer, args.requests)
        none, jwt = statistics.median(requests["none"]), statistics.median(requests["jwt"])
        print(
            f"warm tools/call through Mangum ({args.requests} each, alternating): auth none {none:.3f} ms,"
            f" auth jwt {jwt:.3f} ms, difference {(jwt - none) * 1000:.0f} us"
        )
    finally:
        issuer.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
