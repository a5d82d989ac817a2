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
"""

from __future__ import annotations

import http.client
import json
import random
import threading
from collections import Counter
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler
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


class FaultProxy:
    def __init__(self, upstream: str, *, seed: int | None = None) -> None:
        parts = urlsplit(upstream)
        self.upstream = (parts.hostname or "127.0.0.1", parts.port or 80)
        self._server = LoopbackServer(self._relay, ("POST", "GET"), protocol="HTTP/1.1")
        self.port = self._server.port
        self.url = f"http://127.0.0.1:{self.port}"
        self.rules: dict[str, list[Rule]] = {}
        self.log: Counter[str] = Counter()
        self.injected: Counter[str] = Counter()
        self.random = random.Random(seed)
        self._lock = threading.Lock()

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
    ) -> None:
        """Fail `operation` (`dynamodb.PutItem`) with `kind`, `times` times (-1: until cleared), once `after`
        matching requests went through; only requests whose body holds `containing`; each with `chance`."""
        assert kind in KINDS, kind
        with self._lock:
            self.rules.setdefault(operation, []).append(Rule(kind, after, times, containing, chance))

    def clear(self) -> None:
        with self._lock:
            self.rules.clear()

    def stop(self) -> None:
        self._server.stop()

    # -- relaying ----------------------------------------------------------------------------------
    def _rule_for(self, operation: str, body: bytes) -> Rule | None:
        with self._lock:
            self.log[operation] += 1
            for rule in self.rules.get(operation, []):
                if rule.times == 0 or (rule.containing and rule.containing.encode() not in body):
                    continue
                if rule.after > 0:
                    rule.after -= 1
                    continue
                if self.random.random() >= rule.chance:
                    continue
                if rule.times > 0:
                    rule.times -= 1
                self.injected[f"{operation}:{rule.kind}"] += 1
                return rule
        return None

    def _relay(self, handler: BaseHTTPRequestHandler) -> None:
        length = int(handler.headers.get("content-length") or 0)
        body = handler.rfile.read(length) if length else b""
        target = handler.headers.get("x-amz-target", "")
        service, _, action = target.partition(".")
        prefix = "sqs" if service.startswith("AmazonSQS") else "dynamodb"
        operation = f"{prefix}.{action}" if action else f"{prefix}.?"
        rule = self._rule_for(operation, body)
        if rule is not None and rule.kind != "written, then 500":
            self._fail(handler, rule.kind, prefix)
            return
        status, headers, answer = self._forward(handler, body)
        if rule is not None:  # applied upstream; the client is told it failed
            self._fail(handler, rule.kind, prefix)
            return
        kept = [(name, value) for name, value in headers if name.lower() not in _HOP_BY_HOP]
        respond(handler, status, answer, None, kept)

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
