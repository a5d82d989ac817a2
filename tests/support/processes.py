"""Start and stop server processes for end-to-end tests, on 127.0.0.1 only, stopped by PID."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
from pathlib import Path

from .polling import wait_until

ROOT = Path(__file__).resolve().parents[2]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class ServerProcess:
    """A child process serving HTTP on `port`; `url` is its MCP endpoint."""

    def __init__(
        self,
        args: list[str],
        port: int,
        env: dict[str, str] | None = None,
        log: Path | None = None,
        cwd: Path = ROOT,
        path: str = "/mcp",
    ) -> None:
        self.port = port
        self.url = f"http://127.0.0.1:{port}{path}"
        self._log = log or Path(os.devnull)
        self._handle = self._log.open("ab")
        self.process = subprocess.Popen(
            args,
            cwd=cwd,
            env={**os.environ, **(env or {})},
            stdout=self._handle,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        self._wait_ready()

    def log_text(self) -> str:
        """What the process printed so far (its log file)."""
        return self._log.read_text(errors="replace") if self._log != Path(os.devnull) else ""

    def _wait_ready(self, timeout: float = 30.0) -> None:
        def listening() -> bool:
            if self.process.poll() is not None:
                self.stop()
                raise RuntimeError(f"server exited with {self.process.returncode}; log: {self._log}")
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.2):
                    return True
            except OSError:
                return False

        try:
            wait_until(listening, timeout=timeout, what=f"the server to listen on {self.port} (log: {self._log})")
        except BaseException:
            self.stop()
            raise

    def output(self) -> str:
        """The tail of the server's log, for failure messages."""
        try:
            return self._log.read_text(errors="replace")[-6000:]
        except OSError:
            return ""

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=5)
        self._handle.close()


def lambda_mcp_dev(
    target: str,
    *,
    through_lambda: bool,
    validate_into: Path | None = None,
    log: Path | None = None,
    aws_data_dir: Path | None = None,
    aws_endpoint: str | None = None,
    env: dict[str, str] | None = None,
    extra_args: list[str] | None = None,
    port: int | None = None,
    path: str = "/mcp",
) -> ServerProcess:
    """`lambda-mcp dev TARGET [--lambda] [--aws local --data-dir DIR]`, optionally with every response
    schema-checked into `validate_into`."""
    port = port or free_port()
    env = dict(env or {})
    if validate_into is not None:
        args = [sys.executable, str(ROOT / "tests/support/validating_server.py"), target, str(port)]
        env["LAMBDA_MCP_TEST_VIOLATIONS"] = str(validate_into)
    else:
        args = [sys.executable, "-m", "lambda_mcp.cli", "dev", target, "--port", str(port)]
    if through_lambda:
        args.append("--lambda")
    if aws_data_dir is not None:
        args += ["--aws", "local", "--data-dir", str(aws_data_dir)]
    if aws_endpoint is not None:
        args += ["--aws-endpoint", aws_endpoint]
    return ServerProcess(args + (extra_args or []), port, env, log, path=path)


def ran(server: ServerProcess, task_id: str, *outcomes: str) -> bool:
    """Whether the server's task worker logged a run of `task_id` that ended with one of `outcomes` (its
    "task run" line: one JSON line per run, by `lambda-mcp dev --lambda`'s real worker handler)."""
    for line in server.log_text().splitlines():
        if task_id in line and line.startswith("{"):
            try:
                entry = json.loads(line)
            except ValueError:
                continue
            if (entry.get("message"), entry.get("task_id")) == ("task run", task_id) and entry.get(
                "outcome"
            ) in outcomes:
                return True
    return False
