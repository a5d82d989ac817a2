"""Tasks, and sign-ins, under injected storage and queue faults: what ran for whom and how often, how every
task ended, and who was signed out for the store's trouble. A report, not a test: it exits 0 unless the
harness itself fails.

Everything runs on 127.0.0.1, on the real wire: state in Amazon DynamoDB Local and the task queue on
moto server's SQS, both behind fault-injecting proxies (tests/support/fault_proxy.py), each kind of
fault (throttled, 500, written then 500) at `--fault-rate`:
- per call, always: on DynamoDB PutItem, UpdateItem, GetItem, Query (the facade: DeleteItem for Query)
  and on the kit's SQS sends; botocore retries them, until its retry quota (per client) runs dry;
- past the retries, with `--past-retries` (at `--past-rate`, default `--fault-rate`): each distinct
  request of PutItem, UpdateItem, DeleteItem and GetItem (no written-then-500 for a read), and of
  SendMessage and SendMessageBatch, is chosen with that chance and then fails every attempt: what a
  call sees once botocore's 6 attempts or its retry quota are spent. A written-then-500 send delivers a
  message on every attempt and is answered 500 every time (an ambiguous send).

The tasks scenario (bench/_faults/tasks.py). Clients create tasks through the real HTTP endpoint (the
buffered transport, both eras) and resend a create answered 503 as it was (the same JSON-RPC id); the
real worker handler runs the tasks from a local event source that redelivers what it did not delete;
the harness kills some runs mid-way (the worker dies: nothing in the kit sees it), sends duplicate
messages, answers the tasks that ask, and runs the sweeper every second. Timings are scaled down: the
worker's timeout is 3 s (a lease 3.3 s), the visibility timeout 4 s, a message never picked up is
requeued after 10 s. It measures, from four records (every tool start with `ctx.task_id` and how
that run ended; the task id each `tools/call` answered the client, the only task the client knows
of; the DynamoDB proxy's journal of every request on a task item; a Scan of the table at the end,
not through the proxy):
- orphans run: runs of tasks whose id the client never got (a create that landed and was answered
  503; a send that landed and was answered 500), and how those tasks ended;
- extra runs of the client's tasks (beyond one per round; a task that asks runs twice), by cause: a
  kill of an earlier run; an outcome write that failed past its retries (checked in the journal: a
  write of the task's outcome none of whose attempts reached DynamoDB); anything else `unexplained`;
- lost (a task the client holds with no final state in the table) and stuck (working or parked at
  the end), and how the tasks ended.

The sign-in scenario (`--facade`, bench/_faults/facade.py): users sign in through the authorization
facade and refresh, retrying as clients do; it counts the users signed out wrongly and the codes
redeemed twice (see there).

    .venv/bin/python bench/faults.py [--tasks 1000] [--fault-rate 0.02] [--past-retries] [--seed 7]
    .venv/bin/python bench/faults.py --facade [--sign-ins 500] [--refreshes 2000] [--fault-rate 0.05]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import os
import random
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "src")]  # this tree's kit, also from a git worktree


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--tasks", type=int, default=1000)
    parser.add_argument("--fault-rate", type=float, default=0.02, help="chance of each kind of fault")
    parser.add_argument("--past-retries", action="store_true", help="also fail chosen requests on every attempt")
    parser.add_argument("--past-rate", type=float, help="chance of each kind past the retries (default: --fault-rate)")
    parser.add_argument("--kill-rate", type=float, default=0.05, help="chance a run is killed at each step")
    parser.add_argument("--duplicates", type=float, default=0.1, help="share of tasks sent a second message")
    parser.add_argument("--clients", type=int, default=4, help="clients creating tasks at once")
    parser.add_argument("--concurrency", type=int, default=8, help="worker threads")
    parser.add_argument("--timeout", type=float, default=900, help="seconds to wait for every task to end")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--log", help="write the kit's log lines to this file, to follow a task")
    parser.add_argument("--facade", action="store_true", help="run the sign-in scenario instead")
    parser.add_argument("--sign-ins", type=int, default=500, help="--facade: users who sign in")
    parser.add_argument("--refreshes", type=int, default=2000, help="--facade: refreshes among them")
    parser.add_argument("--lost-rate", type=float, default=0.02, help="--facade: answers the client loses")
    parser.add_argument("--replays", type=float, default=0.05, help="--facade: codes presented a second time")
    parser.add_argument("--upstream-rotates", action="store_true", help="--facade: the upstream rotates its tokens")
    args = parser.parse_args()
    if args.past_rate is None:
        args.past_rate = args.fault_rate
    random.seed(args.seed)
    os.environ.update(AWS_ACCESS_KEY_ID="bench", AWS_SECRET_ACCESS_KEY="bench", AWS_DEFAULT_REGION="us-east-1")
    os.environ.setdefault("AWS_REGION", "us-east-1")
    _quiet(args.log)
    started = time.monotonic()
    with contextlib.ExitStack() as stack:
        if args.facade:
            from bench._faults.facade import run_facade

            report = run_facade(args, stack)
        else:
            from bench._faults.tasks import run_tasks

            report = asyncio.run(run_tasks(args, stack))
    import lambda_mcp

    print(report)
    print(f"kit under test: {Path(lambda_mcp.__file__).parent}; the bench took {time.monotonic() - started:.0f} s")


def _quiet(log: str | None) -> None:
    from botocore.retries.standard import ExponentialBackoff

    ExponentialBackoff.delay_amount = lambda self, context: 0.005  # type: ignore[method-assign]
    logging.getLogger("werkzeug").setLevel(logging.ERROR)  # moto server's access log
    kit_log = logging.getLogger("lambda_mcp")  # the kit's warnings about injected faults: a file, or nowhere
    kit_log.setLevel(logging.DEBUG if log else logging.CRITICAL)
    if log:
        kit_log.addHandler(logging.FileHandler(log))
    kit_log.propagate = False


if __name__ == "__main__":
    main()
