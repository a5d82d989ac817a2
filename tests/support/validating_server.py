"""Run `lambda-mcp dev` (or `--lambda`) with every response checked against the official schemas.

Usage: python tests/support/validating_server.py TARGET PORT [--lambda] [--aws local --data-dir DIR];
violations are appended, one per line, to the file named by LAMBDA_MCP_TEST_VIOLATIONS.
`--aws local` keeps state in DynamoDB on the local AWS API the kit starts, as `lambda-mcp dev` does.
"""

from __future__ import annotations

import base64
import os
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from tests.support.recorder import Recorder  # noqa: E402

RECORDER = Recorder()
OUT = Path(os.environ.get("LAMBDA_MCP_TEST_VIOLATIONS", "violations.txt"))


def _report(before: int) -> None:
    if len(RECORDER.violations) > before:
        with OUT.open("a", encoding="utf-8") as handle:
            for line in RECORDER.violations[before:]:
                handle.write(line.replace("\n", " ") + "\n")


class ValidatingMiddleware:
    """ASGI middleware for the streaming server: validate each exchange once its response completes."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        request_body = bytearray()
        response: dict[str, Any] = {"status": 0, "headers": {}, "body": bytearray()}

        async def recv() -> Any:
            message = await receive()
            if message["type"] == "http.request":
                request_body.extend(message.get("body", b""))
            return message

        async def snd(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start":
                response["status"] = message["status"]
                response["headers"] = {k.decode().lower(): v.decode() for k, v in message.get("headers", [])}
            elif message["type"] == "http.response.body":
                response["body"].extend(message.get("body", b""))
            await send(message)

        try:
            await self.app(scope, recv, snd)
        finally:
            headers = {k.decode().lower(): v.decode() for k, v in scope.get("headers", [])}
            before = len(RECORDER.violations)
            RECORDER.exchange(
                headers, bytes(request_body), response["status"], response["headers"], bytes(response["body"])
            )
            _report(before)


def main() -> None:
    target, port = sys.argv[1], int(sys.argv[2])
    local = None
    if "--aws" in sys.argv:
        from lambda_mcp.local.aws import prepare

        aws = sys.argv[sys.argv.index("--aws") + 1]
        local = prepare(aws, data_dir=Path(sys.argv[sys.argv.index("--data-dir") + 1]))
    try:
        _serve(target, port)
    finally:
        if local is not None:
            local.stop()


def _serve(target: str, port: int) -> None:
    if "--lambda" in sys.argv:
        from lambda_mcp.local import apigw

        real_invoke = apigw._Invoker.invoke

        def invoke(self: Any, event: dict[str, Any]) -> dict[str, Any]:
            result = real_invoke(self, event)
            if "headers" not in event:  # the REST API's token authorizer, not the MCP endpoint
                return result
            body = base64.b64decode(event["body"]) if event.get("body") else b""
            payload = result.get("body") or ""
            data = base64.b64decode(payload) if result.get("isBase64Encoded") else payload.encode()
            headers = {k.lower(): str(v) for k, v in (result.get("headers") or {}).items()}
            before = len(RECORDER.violations)
            RECORDER.exchange(event["headers"], body, int(result.get("statusCode", 200)), headers, data)
            _report(before)
            return result

        apigw._Invoker.invoke = invoke  # type: ignore[method-assign]
        apigw.serve(target, "127.0.0.1", port)
    else:
        import uvicorn

        from lambda_mcp.config import Settings
        from lambda_mcp.kit import build_kit
        from lambda_mcp.loader import load_app

        kit = build_kit(load_app(target), Settings.from_env(default_auth="none"), streaming=True, local=True)
        print(f"validating dev server on 127.0.0.1:{port}", flush=True)
        uvicorn.run(ValidatingMiddleware(kit.asgi()), host="127.0.0.1", port=port, log_level="warning")


if __name__ == "__main__":
    main()
