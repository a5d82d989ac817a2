"""The replay ledger: what earlier rounds of a re-run call were answered and delivered, and how one run
replays them.

A handler that asks the client something runs again from the top once it is answered: a 2026 retry
with `requestState`, a buffered legacy call resumed by a GET, a task's next run on the worker. Every
run must then
1. give each question the key it had before: `Context` numbers questions by their order in the run
   (`elicit`, `elicit#2`, ...; an explicit `key=` used twice is a developer error);
2. find the answers recorded for the questions asked before (`Recorded.answers`);
3. pass the stream closes passed before (`Recorded.checkpoints`), and stop at the next one;
4. not send again what an earlier round delivered: `Outbox` numbers what this run sends, in run
   order, and drops the first `Recorded.delivered` of it.

`Recorded` is immutable: a run reads it and reports how far it got on the signal that ends it
(`CallSuspended`, `InputRequired`) or on its `Outbox`, and its transport records the next `Recorded`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..protocol.ids import CallInputId, CallStream
from ..protocol.outbox import Outbox
from ..protocol.values import Value, set_field
from ..server.suspensions import CallSuspended

__all__ = ["BufferedRound", "Outbox", "Recorded"]


class Recorded(Value):
    """What the rounds before this run left: the client's answers by input key, how many of the run's
    outgoing messages were delivered, and how many stream closes were passed."""

    __slots__ = ("answers", "delivered", "checkpoints", "call_key")
    answers: Mapping[str, dict[str, Any]]
    delivered: int
    checkpoints: int
    call_key: str
    """The same for every run of one call (`ctx.idempotency_key`): minted by its first run."""

    def __init__(
        self,
        answers: Mapping[str, dict[str, Any]] | None = None,
        delivered: int = 0,
        checkpoints: int = 0,
        call_key: str = "",
    ) -> None:
        set_field(self, "answers", {} if answers is None else answers)
        set_field(self, "delivered", delivered)
        set_field(self, "checkpoints", checkpoints)
        set_field(self, "call_key", call_key)


class BufferedRound:
    """One run of a legacy call on a buffered transport: the recorded answers, the ids of the requests it
    sends the client (unguessable: they carry the call's nonce), and its stream closes. It ends the run
    with `CallSuspended` at the first question without an answer, or at a stream close not passed before."""

    def __init__(self, stream: CallStream, nonce: str, recorded: Recorded) -> None:
        self.stream = stream
        self.nonce = nonce
        self.recorded = recorded
        self.passed = 0

    def request_id(self, key: str) -> str:
        return CallInputId(self.stream, key, self.nonce).format()

    def answer(self, key: str) -> dict[str, Any] | None:
        return self.recorded.answers.get(key)

    def suspend(self, awaiting: tuple[str, ...]) -> CallSuspended:
        return CallSuspended(awaiting, self.passed)

    async def checkpoint(self) -> None:
        """`ctx.close_sse_stream()`: a close passed before is replayed; a new one ends the run here."""
        self.passed += 1
        if self.passed > self.recorded.checkpoints:
            raise self.suspend(())
