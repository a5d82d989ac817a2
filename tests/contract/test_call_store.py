"""The CallStore contract, run against every adapter: answers once per key and nonce, runner saves
conditioned on the version, cancellation that survives a (re)start, expiry."""

from __future__ import annotations

import time

import pytest

from lambda_mcp.storage import CallRecord, CallStore, ConflictError

pytestmark = pytest.mark.anyio


def _call(nonce: str = "n1", created_at: float | None = None) -> CallRecord:
    now = time.time() if created_at is None else created_at
    request = {"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": "t"}}
    return CallRecord("s1", "call~Nw", nonce, request, now, now + 600)


async def test_answers_are_stored_once_per_key_and_only_with_the_calls_nonce(call_store: CallStore) -> None:
    started = await call_store.start(_call())
    assert started.version == 1 and started.answers == {}
    answer = {"jsonrpc": "2.0", "id": "r", "result": {"action": "accept"}}
    assert await call_store.answer("s1", "call~Nw", "forged", "elicit", answer) is False
    assert await call_store.answer("s2", "call~Nw", "n1", "elicit", answer) is False  # another session
    assert await call_store.answer("s1", "call~Nw", "n1", "elicit", answer) is True
    again = {"jsonrpc": "2.0", "id": "r", "result": {}}
    assert await call_store.answer("s1", "call~Nw", "n1", "elicit", again) is False
    stored = await call_store.get("s1", "call~Nw", time.time())
    assert stored is not None and stored.answers == {"elicit": answer}
    assert stored.request["params"] == {"name": "t"}


async def test_runner_saves_are_conditioned_on_version_and_keep_answers(call_store: CallStore) -> None:
    started = await call_store.start(_call())
    await call_store.answer("s1", "call~Nw", "n1", "a", {"jsonrpc": "2.0", "id": 1, "result": {}})
    started.delivered, started.checkpoints = 3, 1
    saved = await call_store.save(started)
    assert saved.version == 2 and saved.delivered == 3 and saved.checkpoints == 1 and "a" in saved.answers
    with pytest.raises(ConflictError):
        await call_store.save(started)  # a second run saving from the same version loses
    saved.response = {"jsonrpc": "2.0", "id": 7, "result": {"content": []}}
    final = await call_store.save(saved)
    assert final.response == saved.response and final.version == 3


async def test_a_cancel_flags_a_known_call_and_writes_nothing_for_an_unknown_one(call_store: CallStore) -> None:
    now = time.time()
    assert await call_store.cancel("s1", "call~Nw", now) is None  # a request id the session never used
    assert await call_store.get("s1", "call~Nw", time.time()) is None
    marker = await call_store.start(_call(nonce="", created_at=now).replace(task_id="t1"))
    assert marker.task_id == "t1" and not marker.cancelled
    flagged = await call_store.cancel("s1", "call~Nw", now + 1)
    assert flagged is not None and flagged.cancelled and flagged.task_id == "t1"
    started = await call_store.start(_call(created_at=now))
    assert started.cancelled  # the cancel arrived while only the call's marker existed: it holds
    later = await call_store.start(_call(nonce="n2", created_at=now + 5))
    assert not later.cancelled  # the same request id reused for a later call
    assert await call_store.cancel("s2", "call~Nw", now + 6) is None  # another session's


async def test_expired_calls_are_invisible(call_store: CallStore) -> None:
    await call_store.start(_call(created_at=time.time() - 700))
    assert await call_store.get("s1", "call~Nw", time.time()) is None
