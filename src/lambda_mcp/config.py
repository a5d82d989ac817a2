"""`Settings`: the kit's configuration, read once from `LAMBDA_MCP_*` environment variables."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field

PREFIX = "LAMBDA_MCP_"


def _split(value: str | None) -> tuple[str, ...]:
    return tuple(part.strip() for part in (value or "").split(",") if part.strip())


@dataclass(frozen=True)
class Settings:
    app: str | None = None
    """`path/to/file.py:app` or `module:app`: the user's MCPApp."""
    allowed_hosts: tuple[str, ...] = ()
    """Extra Host header patterns (`api.example.com`, `*.example.com`, `127.0.0.1:*`)."""
    allowed_origins: tuple[str, ...] = ()
    """Allowed Origin header patterns (`https://app.example.com`); requests without Origin are allowed."""
    trust_event_domain: bool = True
    """In Lambda, also allow the API Gateway / Function URL domain the event arrived on."""
    state_key: bytes | None = None
    """Key sealing MRTR `requestState`; shared by every instance (never generated per process in Lambda)."""
    session_ttl_seconds: float = 3600.0
    session_touch_seconds: float = 300.0
    """A live session's expiry slides at most once per this interval."""
    max_body_bytes: int = 1_048_576
    retry_ms: int = 1000
    """`retry:` sent before the server closes a legacy SSE stream for polling."""
    server_request_timeout_seconds: float = 300.0
    max_wait_seconds: float = 25.0
    """Longest a buffered response waits (legacy `tasks/result`) before ending for the client to resume;
    also bounded by the Lambda invocation's remaining time."""
    get_stream: bool = True
    """Buffered transport: serve the legacy GET stream (polled); False answers GET with 405."""
    get_stream_seconds: float = 0.0
    """Buffered transport: how long a legacy GET stream waits for the first change before ending with
    `retry:` (0: it answers at once with what changed since the client's last poll)."""
    listen_hold_seconds: float = 0.0
    """Buffered transport: how long a 2026 `subscriptions/listen` response waits for a change before
    closing (0: the acknowledgement and a graceful close at once; the client listens again)."""
    table_name: str | None = None
    """DynamoDB state table; when set, sessions and stream events live there instead of in memory."""
    task_queue_url: str | None = None
    """SQS queue of the task worker; when set (in Lambda), tasks are offered and run on the worker.
    Unset in Lambda: tasks are not offered (`lambda-mcp dev` runs them in-process instead)."""
    task_dead_letter_arn: str | None = None
    """ARN of the task queue's dead-letter queue: the worker fails tasks whose messages arrive from it."""
    task_max_attempts: int = 3
    """Worker runs started for one task before the sweeper gives up and fails it."""
    task_max_ttl_seconds: float = 86_400.0
    """Cap on a task's lifetime (clients may ask for less)."""
    extra: Mapping[str, str] = field(default_factory=dict)

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> Settings:
        env = os.environ if environ is None else environ
        key = env.get(PREFIX + "STATE_KEY")
        return cls(
            app=env.get(PREFIX + "APP"),
            allowed_hosts=_split(env.get(PREFIX + "ALLOWED_HOSTS")),
            allowed_origins=_split(env.get(PREFIX + "ALLOWED_ORIGINS")),
            trust_event_domain=env.get(PREFIX + "TRUST_EVENT_DOMAIN", "true").lower() != "false",
            state_key=key.encode() if key else None,
            session_ttl_seconds=float(env.get(PREFIX + "SESSION_TTL_SECONDS", 3600)),
            session_touch_seconds=float(env.get(PREFIX + "SESSION_TOUCH_SECONDS", 300)),
            max_body_bytes=int(env.get(PREFIX + "MAX_BODY_BYTES", 1_048_576)),
            retry_ms=int(env.get(PREFIX + "RETRY_MS", 1000)),
            max_wait_seconds=float(env.get(PREFIX + "MAX_WAIT_SECONDS", 25)),
            get_stream=env.get(PREFIX + "GET_STREAM", "on").lower() not in ("off", "false", "0"),
            get_stream_seconds=float(env.get(PREFIX + "GET_STREAM_SECONDS", 0)),
            listen_hold_seconds=float(env.get(PREFIX + "LISTEN_HOLD_SECONDS", 0)),
            table_name=env.get(PREFIX + "TABLE_NAME") or None,
            task_queue_url=env.get(PREFIX + "TASK_QUEUE_URL") or None,
            task_dead_letter_arn=env.get(PREFIX + "TASK_DLQ_ARN") or None,
            task_max_attempts=int(env.get(PREFIX + "TASK_MAX_ATTEMPTS", 3)),
            task_max_ttl_seconds=float(env.get(PREFIX + "TASK_MAX_TTL_SECONDS", 86_400)),
        )
