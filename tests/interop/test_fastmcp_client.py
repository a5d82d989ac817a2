"""The FastMCP client (fastmcp 4.1.0, in its `legacy` and `auto` modes) against `lambda-mcp dev --lambda`:
the real Lambda handler behind an emulated API Gateway, serving examples/approvals/server.py (typed
elicitation, sampling, a lifespan)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastmcp import Client

from tests.support.processes import ServerProcess, lambda_mcp_dev

pytestmark = pytest.mark.anyio


def _serve(app: str, factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    log: Path = factory.mktemp("fastmcp") / "dev.log"
    process = lambda_mcp_dev(app, through_lambda=True, log=log)
    try:
        yield process
    finally:
        process.stop()


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    yield from _serve("examples/approvals/server.py", tmp_path_factory)


async def on_elicit(message: str, response_type: Any, params: Any, context: Any) -> dict[str, Any]:
    assert "Approve an expense" in message
    assert params.requested_schema["required"] == ["approved", "approver"]
    return {"approved": True, "approver": "Ana", "priority": "high"}


async def on_sample(messages: list[Any], params: Any, context: Any) -> str:
    assert params.system_prompt == "You are terse." and params.max_tokens == 60
    return "Fine."


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_typed_elicitation_sampling_and_the_lifespan_through_the_lambda_handler(
    server: ServerProcess, mode: str
) -> None:
    async with Client(server.url, mode=mode, elicitation_handler=on_elicit, sampling_handler=on_sample) as client:
        approved = await client.call_tool("request_expense", {"amount": 12})
        summary = await client.call_tool("summarize", {"text": "a long text"})
        runs = [(await client.call_tool("stats")).structured_content for _ in range(5)]
        version = client.protocol_version
    assert version == ("2026-07-28" if mode == "auto" else "2025-11-25")  # auto adopts the stateless wire
    assert approved.content[0].text == "Ana approved 12.00 (high priority)"  # type: ignore[union-attr]
    assert summary.content[0].text == "Fine."  # type: ignore[union-attr]
    # every call of both modes, on this one handler process: the lifespan ran once
    assert {r["lifespan_runs"] for r in runs if r is not None} == {1}
    assert all(r is not None and r["calls"] >= 2 for r in runs)


@pytest.fixture(scope="module")
def interaction(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    yield from _serve("tests/apps/interaction.py", tmp_path_factory)


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_two_questions_without_keys_are_asked_twice_through_the_lambda_handler(
    interaction: ServerProcess, mode: str
) -> None:
    """Issue 22: both questions of a handler that gives no `key=` reach a real client, on the buffered
    legacy path (suspend, record, re-run) and on the 2026 wire (MRTR rounds)."""
    asked: list[str] = []
    answers = {"First?": "A", "Second?": "B"}

    async def elicit(message: str, response_type: Any, params: Any, context: Any) -> dict[str, Any]:
        asked.append(message)
        return {"name": answers[message]}

    async def sample(messages: list[Any], params: Any, context: Any) -> str:
        return {"one": "x", "two": "y"}[messages[-1].content.text]

    async with Client(interaction.url, mode=mode, elicitation_handler=elicit, sampling_handler=sample) as client:
        result = await client.call_tool("twice", {})
    assert result.content[0].text == "A/B|x/y"  # type: ignore[union-attr]
    assert asked == ["First?", "Second?"]
