"""How long the sweeper takes to recover a mass failure: N working tasks whose worker died, all due.

State in Amazon DynamoDB Local on 127.0.0.1: the tasks are written as a crash would leave them
(working, lease run out, in the due index), then one sweep (the budget a scheduled run has in Lambda:
its 5-minute interval, 270 s) requeues them, and further sweeps run until every task has been
requeued. The messages go through the kit's `SqsExecutor` (`SendMessageBatch`, 10 a request) to the
kit's in-memory SQS (`--queue memory`, the default) or to moto server's SQS (`--queue moto`, in its
own process, drained as a worker fleet would). moto is not a stand-in at this volume: its SQS scans
the queue on every call (16 ms a send when empty, 136 ms at 3,500 messages) and holds one core at
100 %, so with it the figure is moto's. Prints the figures.

    .venv/bin/python bench/recovery.py [--tasks 10000] [--shards 1] [--queue memory|moto]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import os
import secrets
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench._local import start_dynamodb_local  # noqa: E402


async def _write(store: object, count: int, now: float) -> None:
    from lambda_mcp.protocol.ids import new_task_id
    from lambda_mcp.storage.records import TaskRecord

    async def one(index: int) -> None:
        record = TaskRecord(
            task_id=new_task_id(),
            owner="principal:bench",
            method="tools/call",
            params={"name": "job", "arguments": {"n": index}},
            created_at=now - 600,
            expires_at=now + 86_400,
            ttl_ms=86_400_000,
            poll_interval_ms=500,
            attempts=1,
            lease_owner="dead-worker",
            lease_expires_at=now - 60,
            due_at=now - 60,
        )
        await store.create(record)  # type: ignore[attr-defined]

    for start in range(0, count, 50):
        await asyncio.gather(*(one(i) for i in range(start, min(start + 50, count))))


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--tasks", type=int, default=10_000)
    parser.add_argument("--shards", type=int, default=1)
    parser.add_argument("--budget", type=float, default=270.0, help="seconds one sweep may take")
    parser.add_argument("--queue", choices=["memory", "moto"], default="memory")
    args = parser.parse_args()
    os.environ.update(AWS_ACCESS_KEY_ID="bench", AWS_SECRET_ACCESS_KEY="bench", AWS_DEFAULT_REGION="us-east-1")
    logging.getLogger("werkzeug").setLevel(logging.ERROR)
    with contextlib.ExitStack() as stack:
        import boto3

        from lambda_mcp.storage.dynamodb import DynamoDBTaskStore, create_table
        from lambda_mcp.tasks.runtime import TaskRuntime
        from lambda_mcp.tasks.sqs import SqsExecutor

        dynamodb = start_dynamodb_local(stack)
        os.environ["AWS_ENDPOINT_URL_DYNAMODB"] = dynamodb
        table = f"recovery-{secrets.token_hex(4)}"
        create_table(boto3.client("dynamodb"), table)
        store = DynamoDBTaskStore(table, shards=args.shards)
        queue_url, received = _queue(stack, args.queue)

        async def never(*_: object) -> object:
            raise AssertionError("the sweeper never runs a task")

        runtime = TaskRuntime(store, SqsExecutor(queue_url), never)  # type: ignore[arg-type]
        now = time.time()
        began = time.monotonic()
        asyncio.run(_write(store, args.tasks, now))
        print(f"wrote {args.tasks} crashed tasks in {time.monotonic() - began:.0f} s ({args.shards} shard(s))")
        sweeps, requeued, first, began = 0, 0, 0.0, time.monotonic()
        while requeued < args.tasks:
            started = time.monotonic()
            counts = asyncio.run(runtime.sweep(budget_seconds=args.budget))
            sweeps += 1
            requeued += counts["requeued"]
            took = time.monotonic() - started
            first = first or took
            print(f"sweep {sweeps}: {counts} in {took:.1f} s")
            if not counts["requeued"]:
                break
        total = time.monotonic() - began
        time.sleep(3)  # the drain's last receive
        print(
            f"recovered {requeued} of {args.tasks} due tasks in {total:.0f} s over {sweeps} sweep(s)"
            f" ({requeued / total:.0f} tasks/s); the queue received {received()} messages;"
            f" the first sweep took {first:.0f} s of its {args.budget:.0f} s budget"
        )


def _queue(stack: contextlib.ExitStack, kind: str) -> tuple[str, Callable[[], int]]:
    """The queue's URL and the count of messages it received (read at the end)."""
    if kind == "memory":
        from lambda_mcp.local.queue import InMemoryQueue
        from lambda_mcp.tasks.sqs import use_client

        queue = InMemoryQueue("http://127.0.0.1/queue/recovery")
        use_client(queue.url, queue)
        return queue.url, queue.depth  # nothing takes messages out: its depth is what it received
    import boto3

    from tests.support.processes import ServerProcess, free_port

    port = free_port()
    moto = ServerProcess([str(Path(sys.executable).parent / "moto_server"), "-H", "127.0.0.1", "-p", str(port)], port)
    stack.callback(moto.stop)  # its own process: the sweeper's threads do not share its interpreter
    os.environ["AWS_ENDPOINT_URL_SQS"] = f"http://127.0.0.1:{port}"
    queue_url = boto3.client("sqs").create_queue(QueueName=f"tasks-{secrets.token_hex(4)}")["QueueUrl"]
    return queue_url, _drain(stack, queue_url)


def _drain(stack: contextlib.ExitStack, queue_url: str) -> Callable[[], int]:
    """Receive and delete the queue's messages, as the worker fleet would; the count received so far."""
    import threading

    import boto3

    sqs, received, stop = boto3.client("sqs"), [0], threading.Event()

    def drain() -> None:
        while not stop.is_set():
            got = sqs.receive_message(QueueUrl=queue_url, MaxNumberOfMessages=10, WaitTimeSeconds=1).get("Messages")
            if got:
                entries = [{"Id": str(i), "ReceiptHandle": m["ReceiptHandle"]} for i, m in enumerate(got)]
                sqs.delete_message_batch(QueueUrl=queue_url, Entries=entries)
                received[0] += len(got)

    thread = threading.Thread(target=drain, daemon=True)
    thread.start()
    stack.callback(thread.join, 5)
    stack.callback(stop.set)
    return lambda: received[0]


if __name__ == "__main__":
    main()
