"""The single-table key design: every key format and attribute name the DynamoDB adapters use.

| item | pk | sk |
|---|---|---|
| legacy session | `SESSION#<session id>` | `SESSION` |
| stream counter | `SESSION#<session id>` | `STREAM#<stream id>` |
| stream event | `SESSION#<session id>` | `EVENT#<stream id>#<seq, 10 digits>` |
| suspended call | `SESSION#<session id>` | `CALL#<stream id>` |
| change feed entry | `CHANGES` (shard 0), `CHANGES#<n>` | `<cursor>` (microseconds, zero-padded, then a nonce) |
| task | `TASK#<task id>` | `TASK` (plus the `by-owner` and `by-due` index attributes; below) |
| a task's stop flag | `TASK#<task id>` | `STOP` (a cancel's mark, which a running worker polls: a few bytes) |
| a task's checkpoint | `TASK#<task id>` | `STEP#<name>` (`step:<name>`, `sleep:<name>`; `state`, `run`, `result`) |
| a task's retry key | `TASKKEY#<digest>` | `KEY` (the task a request created, for its retries: `task_id`; 120 s) |
| a facade row | `FACADE#<kind>#<key>` | `FACADE` (clients, codes, refresh tokens, consents: `dynamodb.facade`) |

`expires_at` (epoch seconds) is the table's TTL attribute; every read also filters on it,
because DynamoDB deletes expired items up to days late (and moto never does).
"""

from __future__ import annotations

import zlib

PK = "pk"
SK = "sk"
EXPIRES_AT = "expires_at"
SESSION_SK = "SESSION"


def session_pk(session_id: str) -> str:
    return f"SESSION#{session_id}"


def stream_sk(stream_id: str) -> str:
    return f"STREAM#{stream_id}"


def event_sk(stream_id: str, seq: int) -> str:
    return f"EVENT#{stream_id}#{seq:010d}"


def call_sk(stream_id: str) -> str:
    return f"CALL#{stream_id}"


CHANGES_PK = "CHANGES"
"""The feed's partition (shard 0): small, short-lived entries. A partition takes about 1,000 writes/s;
with `shards` > 1 a change goes to a random shard and readers query every shard (docs/decisions.md, "Scale")."""


def changes_pk(shard: int) -> str:
    return CHANGES_PK if shard == 0 else f"{CHANGES_PK}#{shard}"


# Tasks
#
# | item | pk | sk | owner_pk (index `by-owner`) | created_sk |
# |---|---|---|---|---|
# | task | `TASK#<task id>` | `TASK` | `OWNER#<owner>` | `<created_at, 17.6f>#<task id>` |
#
# `working` tasks also carry `due_pk` = `DUE` (or `DUE#<n>`, the task's shard) and `due_sk` =
# `<due, 17.6f>#<task id>` (a sparse index, `by-due`): when their worker lease runs out, or, unclaimed,
# when the sweeper should re-enqueue them. Other statuses drop both attributes, so the sweeper's Query
# reads only work.

TASK_SK = "TASK"
TASK_STOP_SK = "STOP"
OWNER_PK = "owner_pk"
CREATED_SK = "created_sk"
BY_OWNER_INDEX = "by-owner"
DUE_PK = "due_pk"
DUE_SK = "due_sk"
BY_DUE_INDEX = "by-due"
DUE_PARTITION = "DUE"


def task_pk(task_id: str) -> str:
    return f"TASK#{task_id}"


STEP_PREFIX = "STEP#"


def step_sk(name: str) -> str:
    return STEP_PREFIX + name


RETRY_KEY_SK = "KEY"


def retry_key_pk(key: str) -> str:
    return f"TASKKEY#{key}"


def owner_pk(owner: str) -> str:
    return f"OWNER#{owner}"


def created_sk(created_at: float, task_id: str) -> str:
    return f"{created_at:017.6f}#{task_id}"


def due_pk(task_id: str, shards: int) -> str:
    """A task's shard of the due index: fixed by its id, so every save of the task keeps it there."""
    shard = zlib.crc32(task_id.encode()) % shards if shards > 1 else 0
    return DUE_PARTITION if shard == 0 else f"{DUE_PARTITION}#{shard}"


def due_pks(shards: int) -> list[str]:
    return [DUE_PARTITION if shard == 0 else f"{DUE_PARTITION}#{shard}" for shard in range(max(shards, 1))]


def due_sk(due: float, task_id: str) -> str:
    return f"{due:017.6f}#{task_id}"


FACADE_SK = "FACADE"


def facade_pk(kind: str, key: str) -> str:
    return f"FACADE#{kind}#{key}"
