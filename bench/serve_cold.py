"""The streaming path's cold start against the SDK's own server (issue 40): process start to the first
answered 2026-07-28 `tools/call`, each server started and made ready as the Lambda Web Adapter (LWA)
starts and polls it, on 127.0.0.1:

- **lambda-mcp serve** through its `run.sh` (the streaming function's handler), with the function's
  environment (LWA's variables, auth none, state in the local DynamoDB as deployed: `env`), ready when
  `GET /healthz` answers 200 (the template's `AWS_LWA_READINESS_CHECK_PATH`);
- **the SDK** (`bench/apps/sdk_stream_app.py`, its Streamable HTTP app, stateless) under
  `python -m uvicorn --port $PORT sdk_stream_app:app`, as a user's `run.sh` would start it behind LWA,
  ready when `GET /` answers any status from 100 to 499 (LWA's defaults).

LWA polls readiness every 10 ms; so does this. The time includes the interpreter's start, the imports,
the server's start, the readiness polls and one `tools/call` over loopback HTTP; not what only Lambda
adds (LWA's own start as an extension, the runtime API). Each start also records when the server printed
the line that ends its loading phase (`Server.marks`): `serve`'s banner comes after the kit's and the app's
import and build, and before uvicorn's import and start; uvicorn's "Started server process" after its own
import and the SDK app's. `profile(...)` runs one start with `-X importtime` (PYTHONPROFILEIMPORTTIME)
and returns the import self-times up to the first answer.

    env -u PYTHONDONTWRITEBYTECODE .venv/bin/python bench/serve_cold.py [--runs 5]

bench/run.py prints the same figures beside its buffered ones.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

import httpx

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))

from _serve import MODERN, RUN_SH, _free_port  # noqa: E402  (the sibling benchmark's launcher pieces)

APPS = BENCH / "apps"
READY_TIMEOUT_SECONDS = 30.0
POLL_SECONDS = 0.01
"""LWA's readiness interval."""
CALL = json.dumps(
    {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {
            "name": "add",
            "arguments": {"a": 1, "b": 2},
            "_meta": {
                "io.modelcontextprotocol/protocolVersion": MODERN,
                "io.modelcontextprotocol/clientCapabilities": {},
            },
        },
    }
)
CALL_HEADERS = {
    "content-type": "application/json",
    "accept": "application/json, text/event-stream",
    "mcp-protocol-version": MODERN,
    "mcp-method": "tools/call",
    "mcp-name": "add",
}
TARGET = 0.35
"""issue 40: `serve` <= 0.35 x the SDK's server, process start to the first answer."""


@dataclass(frozen=True)
class Server:
    """How LWA would start one server, and when it takes it as ready."""

    key: str
    command: list[str]
    env: dict[str, str]
    readiness: str
    healthy: range
    marks: dict[str, str]  # phase name: the start of the line the server prints when that phase ends


@dataclass
class Start:
    """One cold start, in ms from the process's start."""

    answered: float
    ready: float
    marks: dict[str, float] = field(default_factory=dict)


def lwa_env(base: Mapping[str, str], task_root: Path) -> dict[str, str]:
    """`base` with what the function's environment and LWA's wrapper give the handler process (the `PORT`
    is each start's own); this venv's Python first on the PATH (`python3` in a run.sh)."""
    return {
        **base,
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
        "LAMBDA_TASK_ROOT": str(task_root),
        "AWS_LAMBDA_EXEC_WRAPPER": "/opt/bootstrap",
        "AWS_LAMBDA_RUNTIME_API": "127.0.0.1:9001",
        "AWS_LWA_INVOKE_MODE": "response_stream",
    }


def lambda_mcp_server(env: Mapping[str, str], app: Path = APPS / "lambda_mcp_app.py") -> Server:
    """`lambda-mcp serve` through run.sh, the app in $LAMBDA_TASK_ROOT, settings from `env` (the deployed
    shape: LAMBDA_MCP_TABLE_NAME and the local endpoint, logging settings), auth none, loopback hosts."""
    own = {
        "LAMBDA_MCP_APP": f"{app.name}:app",
        "AWS_LWA_READINESS_CHECK_PATH": "/healthz",
        "LAMBDA_MCP_AUTH": "none",
        "LAMBDA_MCP_STATE_KEY": "b" * 32,
        "LAMBDA_MCP_ALLOWED_HOSTS": "127.0.0.1:*",
    }
    return Server(
        "lambda-mcp serve",
        [str(RUN_SH)],
        lwa_env({**env, **own}, app.parent),
        "/healthz",
        range(200, 201),
        {"kit + app loaded (banner)": "lambda-mcp serve:"},
    )


def sdk_server(env: Mapping[str, str]) -> Server:
    """The SDK's app under uvicorn, as a user's run.sh starts it: `exec python3 -m uvicorn ...`."""
    script = 'cd "$LAMBDA_TASK_ROOT" && exec python3 -m uvicorn --port "$PORT" sdk_stream_app:app'
    return Server(
        "sdk + uvicorn",
        ["/bin/sh", "-c", script],
        lwa_env(env, APPS),
        "/",
        range(100, 500),
        {"uvicorn + app loaded": "INFO:     Started server process"},
    )


def servers(kit_env: Mapping[str, str], sdk_env: Mapping[str, str]) -> list[Server]:
    """Both servers: `lambda-mcp serve` with `kit_env`, the SDK's with `sdk_env`."""
    return [lambda_mcp_server(kit_env), sdk_server(sdk_env)]


def cold_start(server: Server, env: Mapping[str, str] | None = None) -> tuple[Start, list[str]]:
    """Start `server` on a free port (`env` added to its environment), poll its readiness as LWA does, send
    one 2026 `tools/call add(1, 2)`, stop it (by PID); the start's figures and the lines it printed."""
    port = _free_port()
    base = f"http://127.0.0.1:{port}"
    lines: list[tuple[float, str]] = []
    client = httpx.Client(timeout=READY_TIMEOUT_SECONDS)  # built before the start: it costs this process ms
    started = time.perf_counter()
    process = subprocess.Popen(
        server.command,
        env={**server.env, **(env or {}), "PORT": str(port)},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    reader = threading.Thread(target=_read_lines, args=(process, lines), daemon=True)
    reader.start()
    try:
        while True:
            if process.poll() is not None:
                raise RuntimeError(f"{server.key} exited with {process.returncode}: {_tail(lines)}")
            if time.perf_counter() - started > READY_TIMEOUT_SECONDS:
                raise RuntimeError(f"{server.key} was not ready after {READY_TIMEOUT_SECONDS:g} s: {_tail(lines)}")
            try:
                if client.get(base + server.readiness).status_code in server.healthy:
                    break
            except httpx.TransportError:
                time.sleep(POLL_SECONDS)
        ready = time.perf_counter()
        response = client.post(base + "/mcp", content=CALL, headers=CALL_HEADERS)
        answered = time.perf_counter()
        if response.status_code != 200 or '"text":"3"' not in response.text.replace(" ", ""):
            raise RuntimeError(f"{server.key}: tools/call add(1, 2): {response.status_code} {response.text[:500]}")
    finally:
        client.close()
        _stop(process)
        reader.join(timeout=5)
    marks = {}
    for phase, prefix in server.marks.items():
        at = next((t for t, line in lines if line.startswith(prefix)), None)
        if at is None:
            raise RuntimeError(f"{server.key} printed no line starting {prefix!r}: {_tail(lines)}")
        marks[phase] = (at - started) * 1e3
    start = Start((answered - started) * 1e3, (ready - started) * 1e3, marks)
    return start, [line for _, line in lines]


def _read_lines(process: subprocess.Popen[bytes], lines: list[tuple[float, str]]) -> None:
    assert process.stdout is not None
    for raw in process.stdout:
        lines.append((time.perf_counter(), raw.decode(errors="replace").rstrip()))


def _tail(lines: list[tuple[float, str]]) -> str:
    return "\n".join(line for _, line in lines[-30:])


def _stop(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=5)


def measure(servers: list[Server], runs: int) -> dict[str, list[Start]]:
    """`runs` cold starts of each server, alternating which goes first; one untimed start of each before
    (it writes any missing bytecode)."""
    for server in servers:
        cold_start(server)
    starts: dict[str, list[Start]] = {server.key: [] for server in servers}
    for i in range(runs):
        for server in servers if i % 2 == 0 else servers[::-1]:
            starts[server.key].append(cold_start(server)[0])
    return starts


def profile(server: Server) -> dict[str, int]:
    """One start with `-X importtime`: self µs per module imported up to the first answer."""
    _start, lines = cold_start(server, {"PYTHONPROFILEIMPORTTIME": "1"})
    rows: dict[str, int] = {}
    for line in lines:
        if line.startswith("import time:") and "self [us]" not in line:
            self_us, _cumulative, name = line[len("import time:") :].split("|", 2)
            rows[name.strip()] = int(self_us)
    return rows


def median(starts: list[Start], get: str) -> float:
    return statistics.median(s.marks[get] if get in s.marks else getattr(s, get) for s in starts)


def report(starts: dict[str, list[Start]], profiles: dict[str, dict[str, int]] | None = None) -> None:
    """The medians per server and phase, serve's ratio to the SDK against the target, the import profiles."""
    serve, sdk = starts["lambda-mcp serve"], starts["sdk + uvicorn"]
    print(f"== Streaming path, cold: ms from process start (median of {len(serve)} starts each, LWA-style polling)")
    for key, runs in starts.items():
        answered, ready = median(runs, "answered"), median(runs, "ready")
        phases = "".join(f", {phase} {median(runs, phase):.0f}" for phase in runs[0].marks)
        spread = f"{min(s.answered for s in runs):.0f}-{max(s.answered for s in runs):.0f}"
        print(f"   {key:17} answered {answered:5.0f} ms ({spread}): ready {ready:.0f}{phases}")
    banner, ready, answered = (median(serve, get) for get in ("kit + app loaded (banner)", "ready", "answered"))
    print(
        f"   serve: import and build {banner:.0f} ms (interpreter, kit, app), uvicorn's import and start and the"
        f" readiness polls {ready - banner:.0f} ms, the first call {answered - ready:.0f} ms"
    )
    ratios = [a.answered / b.answered for a, b in zip(serve, sdk, strict=True)]
    ratio = answered / median(sdk, "answered")
    print(
        f"   serve / SDK: {ratio:.3f}x of the medians (per pair {min(ratios):.3f}-{max(ratios):.3f}x);"
        f" target <= {TARGET:.2f}x: {'yes' if ratio <= TARGET else 'NO'}"
    )
    for key, rows in (profiles or {}).items():
        packages: dict[str, int] = {}
        for name, self_us in rows.items():
            packages[name.split(".")[0]] = packages.get(name.split(".")[0], 0) + self_us
        top = sorted(packages.items(), key=lambda p: -p[1])[:10]
        print(
            f"   {key}, -X importtime to the first answer: {sum(rows.values()) / 1e3:.0f} ms self, {len(rows)} modules"
        )
        print("     " + ", ".join(f"{name} {us / 1e3:.1f}" for name, us in top) + " (ms)")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5, help="cold starts per server (default 5)")
    args = parser.parse_args()
    import run  # the main benchmark's stacks and local DynamoDB (not when run.py is __main__: it passes env)

    with run.local_dynamodb() as (engine, endpoint, _client):
        run.DEPLOYED_ENV.update({"LAMBDA_MCP_TABLE_NAME": run.TABLE, "AWS_ENDPOINT_URL_DYNAMODB": endpoint})
        both = servers(run.child_env(run.STACKS[run.KIT]), run.child_env(run.STACKS[run.SDK]))
        starts = measure(both, args.runs)
        profiles = {server.key: profile(server) for server in both}
    print(f"state: table {run.TABLE} on {engine} at {endpoint}")
    report(starts, profiles)
    return 0


if __name__ == "__main__":
    sys.exit(main())
