"""Arming the fault proxies the same way for every scenario, and reading their journals."""

from __future__ import annotations

from collections import Counter, defaultdict
from typing import Any

KINDS = ("throttled", "server error", "written, then 500")
PER_CALL: dict[str, tuple[str, ...]] = {
    "dynamodb": ("PutItem", "UpdateItem", "GetItem", "Query"),
    "sqs": ("SendMessage", "SendMessageBatch", "ReceiveMessage", "DeleteMessage"),
}
PAST_RETRIES: dict[str, dict[str, tuple[str, ...]]] = {
    "dynamodb": {"PutItem": KINDS, "UpdateItem": KINDS, "GetItem": KINDS[:2]},
    "sqs": {"SendMessage": KINDS, "SendMessageBatch": KINDS},
}


def arm(
    proxy: Any,
    service: str,
    rate: float,
    past_retries: bool,
    per_call: tuple[str, ...] = (),
    past: dict[str, tuple[str, ...]] | None = None,
    past_rate: float | None = None,
) -> None:
    """Arm `proxy`: each kind at `rate` per call on `per_call` operations, and with `past_retries` each kind
    of `past` at `past_rate` (default `rate`) per distinct request, failing all its attempts (defaults: the
    tables above)."""
    for operation in per_call or PER_CALL[service]:
        for kind in KINDS:
            proxy.arm(f"{service}.{operation}", kind, -1, chance=rate)
    if past_retries:
        for operation, kinds in (past or PAST_RETRIES[service]).items():
            for kind in kinds:
                chance = rate if past_rate is None else past_rate
                proxy.arm(f"{service}.{operation}", kind, -1, chance=chance, per_request=True)


def requests_of(journal: list[Any]) -> dict[str, list[Any]]:
    """The journal's attempts grouped by request (its identity across retries), in order."""
    grouped: dict[str, list[Any]] = defaultdict(list)
    for sent in journal:
        grouped[sent.request].append(sent)
    return grouped


def failed_unapplied(attempts: list[Any]) -> bool:
    """Every attempt of the request was failed before it reached the service: the caller saw an error,
    and nothing was written."""
    return all(not sent.applied for sent in attempts)


def summary(attempts: list[Any]) -> str:
    """`PutItem create: 500x6 (written), answered 500` and the like, for the detail lines."""
    first = attempts[0]
    kinds = Counter(sent.injected or str(sent.status) for sent in attempts)
    what = f"{first.operation}" + (" create" if getattr(first.note, "create", False) else "")
    if getattr(first.note, "status", None):
        what += f" ->{first.note.status}"
    landed = " (reached the service)" if any(sent.applied for sent in attempts) else ""
    return f"{what}: " + ", ".join(f"{k} x{n}" for k, n in kinds.items()) + landed
