"""`lambda-mcp serve` through `run.sh`, started exactly as the Lambda Web Adapter (LWA) starts it (issue 27):
the function's environment (`PORT`, `LAMBDA_TASK_ROOT`, `LAMBDA_MCP_APP`, `AWS_LWA_*`, the exec wrapper, the
runtime API), the template's settings (state in DynamoDB, here on moto server), readiness on `/healthz`.
LWA's own part is emulated: the `x-amzn-request-context` and `x-amzn-lambda-context` headers it writes.

- progress reaches an SSE client well before the result, on both eras (the official SDK's client and
  FastMCP's; raw HTTP on 2026-07-28);
- a 60 s call completes, its quiet stream carrying keep-alive comments (started by the first test in a
  thread and joined by the last, so that the module's other tests run meanwhile);
- streams end cleanly before the invocation's deadline;
- auth `gateway` reads the authorizer's identity from LWA's header behind LWA, and nowhere else.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from fastmcp import Client as FastMCPClient
from mcp import Client

from tests.support.polling import wait_until
from tests.support.processes import ROOT, ServerProcess, free_port, lambda_mcp_dev
from tests.support.schema import sse_messages

MODERN = "2026-07-28"
LEGACY = "2025-11-25"
ACCEPT = "application/json, text/event-stream"
KEEP_ALIVE_SECONDS = 10
ISSUER = "https://issuer.example"
IAM_CALLER = "arn:aws:iam::123456789012:user/alice"
URL_CONTEXT = {"accountId": "123456789012", "domainName": "abc.lambda-url.us-east-1.on.aws", "stage": "$default"}
DOMAIN = "abc.execute-api.us-east-1.amazonaws.com"
REST_CONTEXT = {
    "httpMethod": "POST",
    "path": "/v1/mcp",
    "stage": "v1",
    "domainName": DOMAIN,
    "identity": {"sourceIp": "203.0.113.9"},
}


def _task_root(parent: Path) -> Path:
    """A function's code as `sam build` leaves it: the app and the template's run script (mode kept)."""
    root = parent / "task"
    root.mkdir()
    shutil.copy(ROOT / "tests/apps/streamed.py", root / "app.py")
    shutil.copy2(ROOT / "examples/weather/run.sh", root / "run.sh")
    return root


def _function_env(port: int, root: Path, **settings: str) -> dict[str, str]:
    """What a runtime process started by LWA's wrapper sees (the template's streaming function)."""
    return {
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",  # python3: the test's venv
        "PORT": str(port),
        "LAMBDA_TASK_ROOT": str(root),
        "LAMBDA_RUNTIME_DIR": "/var/runtime",
        "_HANDLER": "run.sh",
        "AWS_LAMBDA_EXEC_WRAPPER": "/opt/bootstrap",
        "AWS_LAMBDA_RUNTIME_API": "127.0.0.1:9001",  # never called: LWA talks to it, not the app
        "AWS_LAMBDA_FUNCTION_NAME": "mcp-http",
        "AWS_LAMBDA_FUNCTION_MEMORY_SIZE": "1024",
        "AWS_LWA_INVOKE_MODE": "response_stream",
        "AWS_LWA_READINESS_CHECK_PATH": "/healthz",
        "LAMBDA_MCP_APP": "app.py:app",
        "LAMBDA_MCP_AUTH": "none",
        "LAMBDA_MCP_STATE_KEY": "k" * 32,
        "LAMBDA_MCP_ALLOWED_HOSTS": "127.0.0.1:*",
        "LAMBDA_MCP_KEEP_ALIVE_SECONDS": str(KEEP_ALIVE_SECONDS),
        **settings,
    }


def start_function(root: Path, log: Path, **settings: str) -> ServerProcess:
    """`$LAMBDA_TASK_ROOT/run.sh`, as `/opt/bootstrap` execs it, once `/healthz` answers (LWA's readiness
    check: every 10 ms)."""
    port = free_port()
    env = _function_env(port, root, **settings)
    process = ServerProcess([str(root / "run.sh")], port, env, log, cwd=root)

    def ready() -> bool:
        try:
            return httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=1).status_code == 200
        except httpx.HTTPError:
            time.sleep(0.01)
            return False

    wait_until(ready, timeout=10, what=f"/healthz (log: {log})")
    return process


def lwa_headers(deadline_in: float = 900, context: dict[str, Any] | None = None) -> dict[str, str]:
    """What LWA adds to a forwarded request: the invocation's deadline (and the event's request context)."""
    headers = {
        "x-amzn-lambda-context": json.dumps({"request_id": "r1", "deadline": int((time.time() + deadline_in) * 1000)})
    }
    if context is not None:
        headers["x-amzn-request-context"] = json.dumps(context)
    return headers


def modern_call(
    name: str, arguments: dict[str, Any], rid: int = 1, progress: bool = False
) -> tuple[dict[str, str], str]:
    meta: dict[str, Any] = {
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientCapabilities": {},
    }
    if progress:
        meta["progressToken"] = "p"
    body = {
        "jsonrpc": "2.0",
        "id": rid,
        "method": "tools/call",
        "params": {"name": name, "arguments": arguments, "_meta": meta},
    }
    headers = {
        "content-type": "application/json",
        "accept": ACCEPT,
        "mcp-protocol-version": MODERN,
        "mcp-method": "tools/call",
        "mcp-name": name,
    }
    return headers, json.dumps(body)


@dataclass
class Stream:
    """What a raw SSE response delivered: each data message with its arrival time, and comment lines."""

    status: int = 0
    messages: list[tuple[float, dict[str, Any]]] = field(default_factory=list)
    comments: int = 0
    fields: list[str] = field(default_factory=list)
    started: float = field(default_factory=time.monotonic)


def read_stream(url: str, headers: dict[str, str], body: str, timeout: float = 120) -> Stream:
    seen = Stream()
    block: list[str] = []
    with httpx.Client(timeout=timeout) as http, http.stream("POST", url, content=body, headers=headers) as response:
        seen.status = response.status_code
        for line in response.iter_lines():
            if line.startswith(":"):
                seen.comments += 1
            elif line:
                block.append(line)
                seen.fields.append(line)
            elif block:
                seen.messages += [(time.monotonic(), m) for m in sse_messages(("\n".join(block) + "\n\n").encode())]
                block = []
    return seen


@pytest.fixture(scope="module")
def function(tmp_path_factory: pytest.TempPathFactory, moto_server_url: str) -> Iterator[ServerProcess]:
    """The streaming function with its state in DynamoDB (moto server), as the template deploys it."""
    import boto3

    from lambda_mcp.storage.dynamodb import create_table

    create_table(boto3.client("dynamodb", endpoint_url=moto_server_url), "serve-state")
    work = tmp_path_factory.mktemp("serve")
    process = start_function(
        _task_root(work),
        work / "function.log",
        AWS_ENDPOINT_URL_DYNAMODB=moto_server_url,
        LAMBDA_MCP_TABLE_NAME="serve-state",
    )
    yield process
    process.stop()


@pytest.fixture(scope="module")
def long_call(function: ServerProcess) -> Iterator[dict[str, Any]]:
    """A 60 s silent 2026 call, running in a thread while the module's other tests run."""
    outcome: dict[str, Any] = {}

    def run() -> None:
        headers, body = modern_call("work_quietly", {"seconds": 60})
        try:
            outcome["stream"] = read_stream(function.url, {**headers, **lwa_headers()}, body, timeout=120)
        except Exception as exc:  # reported by the joining test
            outcome["error"] = exc

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    outcome["thread"] = thread
    yield outcome
    thread.join(timeout=1)


def test_a_60_second_call_starts(long_call: dict[str, Any]) -> None:
    """(Joined by the module's last test.)"""
    assert long_call["thread"].is_alive() or "stream" in long_call


def test_the_run_script_starts_serve_behind_lwa_with_state_in_dynamodb(function: ServerProcess) -> None:
    log = function.log_text()
    assert "streamed on http://127.0.0.1:" in log and "DynamoDB table serve-state" in log, log
    assert "behind the Lambda Web Adapter" in log and "not behind" not in log, log
    assert httpx.get(f"http://127.0.0.1:{function.port}/healthz").json() == {"status": "ok"}


@pytest.mark.anyio
@pytest.mark.parametrize("mode", [LEGACY, MODERN])
async def test_progress_reaches_the_sdk_client_long_before_the_result(function: ServerProcess, mode: str) -> None:
    progressed: list[float] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        progressed.append(time.monotonic())

    with anyio.fail_after(30):
        async with Client(function.url, mode="legacy" if mode == LEGACY else mode, read_timeout_seconds=20) as client:
            result = await client.call_tool("progress_then_work", {"seconds": 2}, progress_callback=on_progress)
            answered = time.monotonic()
            version = client.protocol_version
    assert version == mode
    assert [block.text for block in result.content] == ["worked"]  # type: ignore[union-attr]
    assert progressed and answered - progressed[0] >= 1.5


@pytest.mark.anyio
@pytest.mark.parametrize("mode", [LEGACY, MODERN])
async def test_progress_reaches_the_fastmcp_client_long_before_the_result(function: ServerProcess, mode: str) -> None:
    progressed: list[float] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        progressed.append(time.monotonic())

    with anyio.fail_after(30):
        async with FastMCPClient(function.url, mode="legacy" if mode == LEGACY else mode, timeout=20) as client:
            result = await client.call_tool("progress_then_work", {"seconds": 2}, progress_handler=on_progress)
            answered = time.monotonic()
            version = client.protocol_version
    assert version == mode
    assert result.content[0].text == "worked"
    assert progressed and answered - progressed[0] >= 1.5


def test_progress_reaches_a_raw_2026_stream_long_before_the_result(function: ServerProcess) -> None:
    headers, body = modern_call("progress_then_work", {"seconds": 2}, progress=True)
    seen = read_stream(function.url, {**headers, **lwa_headers()}, body)
    assert seen.status == 200
    (progress_at, progress), (result_at, result) = seen.messages
    assert progress["method"] == "notifications/progress" and progress["params"]["message"] == "started"
    assert result["result"]["content"][0]["text"] == "worked"
    assert result_at - progress_at >= 1.5


def test_a_call_past_the_invocations_deadline_ends_with_an_error_before_it(function: ServerProcess) -> None:
    """2026 (no resumable streams): an error response two seconds before the deadline; the call stops."""
    headers, body = modern_call("work_quietly", {"seconds": 30}, rid=5)
    seen = read_stream(function.url, {**headers, **lwa_headers(deadline_in=4.5)}, body)
    elapsed = time.monotonic() - seen.started
    assert seen.status == 200 and seen.comments >= 1  # the stream opened with a keep-alive comment
    [(_, error)] = seen.messages
    assert error["id"] == 5 and "did not finish before the function's timeout" in error["error"]["message"]
    assert elapsed < 4.5


def _legacy_session(url: str) -> dict[str, str]:
    """The headers of a new 2025-11-25 session's requests."""
    base = {"content-type": "application/json", "accept": ACCEPT}
    params = {"protocolVersion": LEGACY, "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}
    with httpx.Client(timeout=30) as http:
        initialize = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": params}
        opened = http.post(url, json=initialize, headers=base)
        session = {**base, "mcp-session-id": opened.headers["mcp-session-id"], "mcp-protocol-version": LEGACY}
        http.post(url, json={"jsonrpc": "2.0", "method": "notifications/initialized"}, headers=session)
    return session


def test_a_resumable_stream_ends_with_retry_before_the_deadline_and_resumes_in_a_later_invocation(
    function: ServerProcess,
) -> None:
    """2025-11-25: the stream ends with `retry:` after the last event id; the call goes on, and a GET with
    `Last-Event-ID` (a later invocation) delivers its result."""
    session = _legacy_session(function.url)
    call = {
        "jsonrpc": "2.0",
        "id": 9,
        "method": "tools/call",
        "params": {"name": "progress_then_work", "arguments": {"seconds": 3}, "_meta": {"progressToken": 1}},
    }
    seen = read_stream(function.url, {**session, **lwa_headers(deadline_in=3.5)}, json.dumps(call))
    assert [m.get("method") for _, m in seen.messages] == ["notifications/progress"]
    *_, event_id, retry, data = seen.fields  # the last event: its id, `retry:` and empty data
    assert event_id.startswith("id: ") and retry == "retry: 1000" and data.strip() == "data:"
    last_id = event_id.removeprefix("id: ")
    resumed = {**session, **lwa_headers(), "last-event-id": last_id}
    with httpx.Client(timeout=30) as http:
        replay = http.get(function.url, headers=resumed)
    assert replay.status_code == 200
    assert [m["result"]["content"][0]["text"] for m in sse_messages(replay.content) if "result" in m] == ["worked"]


def test_a_legacy_get_stream_ends_with_retry_before_the_deadline(function: ServerProcess) -> None:
    session = _legacy_session(function.url)
    fields: list[str] = []
    started = time.monotonic()
    headers = {**session, **lwa_headers(deadline_in=3.5), "accept": "text/event-stream"}
    with httpx.Client(timeout=30) as http, http.stream("GET", function.url, headers=headers) as response:
        assert response.status_code == 200
        fields = [line for line in response.iter_lines() if line]
    assert fields == [": stream open", "retry: 1000"]
    assert time.monotonic() - started < 3.5


@pytest.fixture(scope="module")
def gateway(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[ServerProcess, ServerProcess]]:
    """Auth `gateway` through run.sh: one function behind LWA, one started the same way outside Lambda
    (no runtime API: a laptop or a container running the template's environment)."""
    work = tmp_path_factory.mktemp("gateway")
    root = _task_root(work)
    behind = start_function(root, work / "behind.log", LAMBDA_MCP_AUTH="gateway", LAMBDA_MCP_AUTH_ISSUER=ISSUER)
    outside = start_function(root, work / "outside.log", LAMBDA_MCP_AUTH="gateway", AWS_LAMBDA_RUNTIME_API="")
    yield behind, outside
    behind.stop()
    outside.stop()


MODERN_META = {"io.modelcontextprotocol/protocolVersion": MODERN, "io.modelcontextprotocol/clientCapabilities": {}}
ROUTING = {"content-type": "application/json", "accept": ACCEPT, "mcp-protocol-version": MODERN}


def _list_tools(url: str, headers: dict[str, str]) -> httpx.Response:
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"_meta": MODERN_META}}
    return httpx.post(url, json=body, headers={**ROUTING, "mcp-method": "tools/list", **headers}, timeout=10)


def _status_in_pieces(port: int, headers: dict[str, str]) -> int:
    """The status of a `tools/list` whose request is written in two parts, the first 17 KB of it first."""
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"_meta": MODERN_META}})
    lines = {**ROUTING, "mcp-method": "tools/list", **headers, "content-length": str(len(body))}
    request = ("POST /mcp HTTP/1.1\r\n" + "".join(f"{k}: {v}\r\n" for k, v in lines.items()) + "\r\n" + body).encode()
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(request[:17_000])
        time.sleep(0.2)
        sock.sendall(request[17_000:])
        return int(sock.recv(64).split()[1])


def test_gateway_auth_behind_lwa_reads_the_authorizer_from_lwas_header(
    gateway: tuple[ServerProcess, ServerProcess],
) -> None:
    behind, _ = gateway
    caller = {**URL_CONTEXT, "authorizer": {"iam": {"userArn": IAM_CALLER, "accountId": "123456789012"}}}
    allowed = _list_tools(behind.url, lwa_headers(context=caller))
    assert allowed.status_code == 200, allowed.text
    assert {t["name"] for t in allowed.json()["result"]["tools"]} == {"progress_then_work", "work_quietly"}
    # a big context (a Cognito authorizer's claims) arriving in pieces: past uvicorn's default limit
    # (16 KiB of incomplete headers: 400)
    claims = {"sub": "alice", "iss": "https://cognito-idp.example", "groups": "g" * 20_000}
    big = {**REST_CONTEXT, "authorizer": {"claims": claims}}
    assert _status_in_pieces(behind.port, {**lwa_headers(context=big), "host": DOMAIN}) == 200
    # no identity in the context (a pass-through event's null, or none at all): refused, never anonymous
    assert _list_tools(behind.url, lwa_headers(context=URL_CONTEXT)).status_code == 401
    assert _list_tools(behind.url, {"x-amzn-request-context": "null"}).status_code == 401
    assert _list_tools(behind.url, {}).status_code == 401


def test_behind_lwa_a_rest_apis_context_gives_the_challenge_its_stage_and_domain(
    gateway: tuple[ServerProcess, ServerProcess],
) -> None:
    behind, _ = gateway
    refused = _list_tools(behind.url, {**lwa_headers(context=REST_CONTEXT), "host": DOMAIN})
    assert refused.status_code == 401
    metadata = f"https://{DOMAIN}/v1/.well-known/oauth-protected-resource/mcp"
    assert f'resource_metadata="{metadata}"' in refused.headers["www-authenticate"]
    # the copy a REST API's renaming of WWW-Authenticate needs: added because the request came through Lambda
    assert refused.headers["lambda-mcp-challenge"] == refused.headers["www-authenticate"]
    direct = _list_tools(behind.url, {})
    assert direct.status_code == 401 and "lambda-mcp-challenge" not in direct.headers


def test_outside_lambda_the_header_is_never_trusted(
    gateway: tuple[ServerProcess, ServerProcess], tmp_path: Path
) -> None:
    _, outside = gateway
    assert "not behind the Lambda Web Adapter" in outside.log_text()
    forged = {"x-amzn-request-context": json.dumps({**URL_CONTEXT, "authorizer": {"iam": {"userArn": IAM_CALLER}}})}
    assert _list_tools(outside.url, forged).status_code == 401
    # nor by `lambda-mcp dev`, nor by the buffered Lambda handler (whose identity comes from the event only)
    for through_lambda in (False, True):
        dev = lambda_mcp_dev(
            "tests/apps/streamed.py",
            through_lambda=through_lambda,
            env={"LAMBDA_MCP_AUTH": "gateway"},
            log=tmp_path / f"dev-{through_lambda}.log",
        )
        try:
            assert _list_tools(dev.url, forged).status_code == 401, dev.output()
        finally:
            dev.stop()


def test_the_60_second_call_completed_with_keep_alive_comments(long_call: dict[str, Any]) -> None:
    """The module's last test: joins the call the first one started."""
    long_call["thread"].join(timeout=90)
    assert "error" not in long_call, long_call.get("error")
    seen: Stream = long_call["stream"]
    assert seen.status == 200
    [(_, result)] = seen.messages
    assert result["result"]["content"][0]["text"] == "worked 60 s"
    assert seen.comments >= 60 // KEEP_ALIVE_SECONDS - 2  # quiet for 60 s: a comment every 10 s
