"""A fault-injecting HTTP proxy on 127.0.0.1 in front of a local AWS endpoint (DynamoDB Local, moto
server's SQS): the kit's clients talk to it over the real wire, and it fails chosen operations the way
the service itself would answer.

| kind | what the client sees |
|---|---|
| `throttled` | 400 `ProvisionedThroughputExceededException` (DynamoDB) / `ThrottlingException` |
| `server error` | 500 `InternalServerError`; nothing was applied |
| `conditional` | 400 `ConditionalCheckFailedException`; nothing was applied |
| `written, then 500` | the request is applied, then answered 500: DynamoDB's ambiguous 5xx |

The operation is named `dynamodb.PutItem`, `sqs.SendMessage`, ... (from `X-Amz-Target`). A rule fires
`times` times (-1: until cleared) once `after` matching requests went through, and only for requests
whose body contains `containing` (to aim at one item: `TASK#<id>`, `EVENT#`). `log` keeps every
operation that went through, and `injected` what was failed.

Faults past the client's retries: a rule armed `per_request=True` draws its `chance` once per distinct
request, and once it fires for a request it fails every retry of that same request too (botocore
resends a request with the same `amz-sdk-invocation-id` header; without one, the same body), so the
call fails whatever the client's retry budget (a retry quota gone dry looks the same to the caller).
Its `times` counts requests, not attempts. `written, then 500` applies each attempt, then answers 500:
an SQS send delivers a message on every attempt.

`note`, if given, is asked of every request (`note(operation, body)`); each request it names (anything
but None) is kept in `journal` as a `Sent`: the operation, the note, the request's identity across
retries, its attempt, the fault injected, whether it reached the upstream, and the status answered.
"""

from __future__ import annotations

import hashlib
import http.client
import json
import random
import socket
import threading
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler
from typing import Any
from urllib.parse import urlsplit

from .loopback import LoopbackServer, respond

KINDS = ("throttled", "server error", "conditional", "written, then 500")
_ERRORS = {
    "throttled": (400, "ProvisionedThroughputExceededException"),
    "server error": (500, "InternalServerError"),
    "conditional": (400, "ConditionalCheckFailedException"),
    "written, then 500": (500, "InternalServerError"),
}
_HOP_BY_HOP = {"connection", "keep-alive", "transfer-encoding", "content-length", "host"}


@dataclass
class Rule:
    kind: str
    after: int = 0
    times: int = 1
    containing: str = ""
    chance: float = 1.0
    per_request: bool = False
    """Drawn once per distinct request; once fired, it fails every retry of that request (see the module)."""


@dataclass(frozen=True)
class Sent:
    """One attempt of a request `note` named, as the proxy handled it."""

    operation: str
    note: Any
    request: str
    """The request's identity across its retries: botocore's `amz-sdk-invocation-id`, else a digest of the body."""
    attempt: int
    """botocore's attempt number (`amz-sdk-request: attempt=N`), 0 when the header is absent."""
    injected: str
    """The kind of fault injected, "" for none."""
    applied: bool
    """The request reached the upstream (no fault, or `written, then 500`)."""
    status: int
    """The HTTP status the client got."""


class FaultProxy:
    def __init__(
        self, upstream: str, *, seed: int | None = None, note: Callable[[str, bytes], Any] | None = None
    ) -> None:
        parts = urlsplit(upstream)
        self.upstream = (parts.hostname or "127.0.0.1", parts.port or 80)
        self._server = LoopbackServer(self._relay, ("POST", "GET"), protocol="HTTP/1.1")
        self.port = self._server.port
        self.url = f"http://127.0.0.1:{self.port}"
        self.rules: dict[str, list[Rule]] = {}
        self.log: Counter[str] = Counter()
        self.injected: Counter[str] = Counter()
        self.random = random.Random(seed)
        self.note = note
        self.journal: list[Sent] = []
        self._lock = threading.Lock()
        self._stuck: dict[str, Rule] = {}
        """Requests a `per_request` rule fired for: their retries fail the same way."""
        self._drawn: set[tuple[int, str]] = set()
        """(rule, request) pairs whose one draw of a `per_request` rule's chance did not fire."""

    # -- configuring -----------------------------------------------------------------------------
    def arm(
        self,
        operation: str,
        kind: str,
        times: int = 1,
        *,
        after: int = 0,
        containing: str = "",
        chance: float = 1.0,
        per_request: bool = False,
    ) -> None:
        """Fail `operation` (`dynamodb.PutItem`) with `kind`, `times` times (-1: until cleared), once `after`
        matching requests went through; only requests whose body holds `containing`; each with `chance`.
        `per_request`: the chance is drawn once per distinct request, and a request it fired for fails on
        every retry too (a fault past the client's retries; `times` then counts requests)."""
        assert kind in KINDS, kind
        with self._lock:
            rule = Rule(kind, after, times, containing, chance, per_request)
            self.rules.setdefault(operation, []).append(rule)

    def clear(self) -> None:
        with self._lock:
            self.rules.clear()
            self._stuck.clear()
            self._drawn.clear()

    def stop(self) -> None:
        self._server.stop()

    # -- relaying ----------------------------------------------------------------------------------
    def _rule_for(self, operation: str, body: bytes, request: str) -> Rule | None:
        with self._lock:
            self.log[operation] += 1
            rules = self.rules.get(operation, [])
            stuck = self._stuck.get(request)
            if stuck is not None and any(stuck is rule for rule in rules):  # a retry of a request it failed
                self.injected[f"{operation}:{stuck.kind}"] += 1
                return stuck
            for rule in rules:
                if rule.times == 0 or (rule.containing and rule.containing.encode() not in body):
                    continue
                if rule.per_request and (id(rule), request) in self._drawn:
                    continue
                if rule.after > 0:
                    rule.after -= 1
                    continue
                if self.random.random() >= rule.chance:
                    if rule.per_request:
                        self._drawn.add((id(rule), request))
                    continue
                if rule.times > 0:
                    rule.times -= 1
                if rule.per_request:
                    self._stuck[request] = rule
                self.injected[f"{operation}:{rule.kind}"] += 1
                return rule
        return None

    def _relay(self, handler: BaseHTTPRequestHandler) -> None:
        # the answer goes out in two writes (headers, body): without this, Nagle's algorithm holds the body
        # until the client's delayed ACK of the headers, 40 ms per request on a kept-alive connection
        handler.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        length = int(handler.headers.get("content-length") or 0)
        body = handler.rfile.read(length) if length else b""
        target = handler.headers.get("x-amz-target", "")
        service, _, action = target.partition(".")
        prefix = "sqs" if service.startswith("AmazonSQS") else "dynamodb"
        operation = f"{prefix}.{action}" if action else f"{prefix}.?"
        request = handler.headers.get("amz-sdk-invocation-id") or hashlib.sha256(body).hexdigest()
        rule = self._rule_for(operation, body, request)
        if rule is not None and rule.kind != "written, then 500":
            self._fail(handler, rule.kind, prefix)
            self._record(handler, operation, body, request, rule.kind, False, _ERRORS[rule.kind][0])
            return
        status, headers, answer = self._forward(handler, body)
        if rule is not None:  # applied upstream; the client is told it failed
            self._fail(handler, rule.kind, prefix)
            self._record(handler, operation, body, request, rule.kind, True, _ERRORS[rule.kind][0])
            return
        kept = [(name, value) for name, value in headers if name.lower() not in _HOP_BY_HOP]
        respond(handler, status, answer, None, kept)
        self._record(handler, operation, body, request, "", True, status)

    def _record(
        self,
        handler: BaseHTTPRequestHandler,
        operation: str,
        body: bytes,
        request: str,
        injected: str,
        applied: bool,
        status: int,
    ) -> None:
        """Keep the attempt in `journal` when `note` names it."""
        if self.note is None:
            return
        noted = self.note(operation, body)
        if noted is None:
            return
        attempt = 0
        for part in (handler.headers.get("amz-sdk-request") or "").split(";"):
            name, _, value = part.strip().partition("=")
            if name == "attempt" and value.isdigit():
                attempt = int(value)
        with self._lock:
            self.journal.append(Sent(operation, noted, request, attempt, injected, applied, status))

    def _forward(self, handler: BaseHTTPRequestHandler, body: bytes) -> tuple[int, list[tuple[str, str]], bytes]:
        connection = http.client.HTTPConnection(*self.upstream, timeout=60)
        try:
            headers = {k: v for k, v in handler.headers.items() if k.lower() not in _HOP_BY_HOP}
            headers["Host"] = f"{self.upstream[0]}:{self.upstream[1]}"
            connection.request(handler.command, handler.path, body=body, headers=headers)
            response = connection.getresponse()
            return response.status, response.getheaders(), response.read()
        finally:
            connection.close()

    @staticmethod
    def _fail(handler: BaseHTTPRequestHandler, kind: str, prefix: str) -> None:
        status, code = _ERRORS[kind]
        if prefix == "sqs" and kind == "throttled":
            code = "ThrottlingException"
        namespace = "com.amazonaws.sqs" if prefix == "sqs" else "com.amazonaws.dynamodb.v20120810"
        payload = json.dumps({"__type": f"{namespace}#{code}", "message": f"injected: {kind}"}).encode()
        respond(handler, status, payload, "application/x-amz-json-1.0", [("x-amzn-requestid", "injected")])
