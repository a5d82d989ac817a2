"""`lambda_mcp.testing.Client`: an app in process on either era, as an app's own tests use it, with typed
elicitation, sampling, a lifespan, roots, tasks and logs."""

from __future__ import annotations

from typing import Any

import pytest

from lambda_mcp.loader import load_app
from lambda_mcp.testing import Client, RequestFailed
from tests.support.processes import ROOT

pytestmark = pytest.mark.anyio
ERAS = ["2026-07-28", "2025-11-25", "2025-06-18"]
approvals = load_app(str(ROOT / "examples/approvals/server.py"))


async def test_a_tool_call_reads_as_a_result_object() -> None:
    async with Client(load_app(str(ROOT / "examples/conformance/server.py"))) as client:
        simple = await client.call_tool("test_simple_text")
        failing = await client.call_tool("test_error_handling")
        assert not simple.is_error and simple.text == "This is a simple text response for testing."
        assert failing.is_error and failing.text == "This tool intentionally returns an error for testing"
        assert {t["name"] for t in await client.list_tools()} >= {"test_simple_text", "test_error_handling"}
        (contents,) = await client.read_resource("test://template/7/data")
        assert "7" in contents["text"]
        prompt = await client.get_prompt("test_prompt_with_arguments", {"arg1": "a", "arg2": "b"})
        assert prompt["messages"]
        with pytest.raises(RequestFailed) as failed:
            await client.call_tool("no_such_tool")
        assert failed.value.code == -32602


async def test_structured_output_comes_back_as_structured_content() -> None:
    async with Client(load_app(str(ROOT / "examples/weather/server.py"))) as client:
        result = await client.call_tool("forecast", {"city": "Lisbon", "days": 2})
    assert result.structured_content is not None and len(result.structured_content["result"]) == 2


@pytest.mark.parametrize("version", ERAS)
async def test_typed_elicitation_sampling_and_lifespan_state_on_each_era(version: str) -> None:
    asked: list[tuple[str, dict[str, Any]]] = []
    sampled: list[dict[str, Any]] = []

    async def on_elicit(message: str, schema: dict[str, Any]) -> dict[str, Any]:
        asked.append((message, schema))
        return {"approved": True, "approver": "Ana", "priority": "high"}

    async def on_sample(messages: list[dict[str, Any]], params: dict[str, Any]) -> str:
        sampled.append(params)
        return "A short summary."

    async with Client(
        approvals, protocol_version=version, elicitation_handler=on_elicit, sampling_handler=on_sample
    ) as client:
        approved = await client.call_tool("request_expense", {"amount": 12.5})
        summary = await client.call_tool("summarize", {"text": "a long text"})
        for _ in range(3):
            await client.call_tool("request_expense", {"amount": 1})
        stats = await client.call_tool("stats")
    assert approved.text == "Ana approved 12.50 (high priority)"
    message, schema = asked[0]
    assert message == "Approve an expense of 12.50?"
    assert schema["required"] == ["approved", "approver"]
    assert schema["properties"]["priority"] == {
        "type": "string",
        "enum": ["low", "normal", "high"],
        "default": "normal",
    }
    assert summary.text == "A short summary."
    assert sampled[0]["systemPrompt"] == "You are terse." and sampled[0]["temperature"] == 0.2
    assert sampled[0]["modelPreferences"] == {"hints": [{"name": "claude"}]} and sampled[0]["maxTokens"] == 60
    # one lifespan for the whole client: every call saw the same state object
    assert stats.structured_content is not None
    assert stats.structured_content["calls"] == 5 and stats.structured_content["approved"] == 4
    assert approvals.lifespans.entries >= 1


async def test_the_lifespan_is_entered_once_per_client_and_left_at_its_end() -> None:
    before = approvals.lifespans.entries
    async with Client(approvals) as client:
        runs = {(await client.call_tool("stats")).structured_content["lifespan_runs"] for _ in range(5)}  # type: ignore[index]
        assert approvals.lifespans.entries == before + 1 and len(runs) == 1
    async with Client(approvals) as client:
        again = (await client.call_tool("stats")).structured_content
    assert approvals.lifespans.entries == before + 2 and again is not None and again["lifespan_runs"] not in runs


@pytest.mark.parametrize("version", ["2026-07-28", "2025-11-25"])
async def test_a_task_reads_the_lifespan_state_and_asks_through_the_handlers(version: str) -> None:
    async with Client(
        approvals, protocol_version=version, elicitation_handler=lambda m, s: {"approved": True, "approver": "Bo"}
    ) as client:
        await client.call_tool("request_expense", {"amount": 3})
        task = await client.start_task("total")
        assert task["status"] in ("working", "completed")
        result = await client.task_result(task["taskId"])
        polled = await client.get_task(task["taskId"])
    assert result.text == "3.00" and polled["status"] == "completed"


@pytest.mark.parametrize("version", ERAS)
async def test_declines_and_primitive_forms(version: str) -> None:
    answers = iter([{"action": "decline"}, {"value": False}, {"value": True}])
    async with Client(approvals, protocol_version=version, elicitation_handler=lambda m, s: next(answers)) as client:
        declined = await client.call_tool("request_expense", {"amount": 1})
        kept = await client.call_tool("confirm_delete", {"name": "report"})
        deleted = await client.call_tool("confirm_delete", {"name": "report"})
    assert declined.text == "The request was declined"
    assert (kept.text, deleted.text) == ("kept report", "deleted report")


@pytest.mark.parametrize("version", ERAS)
async def test_an_answer_that_does_not_match_the_form_is_a_tool_error_naming_the_fields(version: str) -> None:
    async with Client(
        approvals, protocol_version=version, elicitation_handler=lambda m, s: {"approved": "perhaps", "approver": ""}
    ) as client:
        result = await client.call_tool("request_expense", {"amount": 1})
    assert result.is_error
    assert "does not match" in result.text and "approved" in result.text and "approver" in result.text


async def test_without_a_handler_the_client_declares_nothing_and_the_tool_says_so() -> None:
    async with Client(approvals, protocol_version="2025-11-25") as client:
        result = await client.call_tool("request_expense", {"amount": 1})
    assert result.is_error and "elicitation" in result.text
    async with Client(approvals) as client:
        with pytest.raises(RequestFailed) as failed:
            await client.call_tool("request_expense", {"amount": 1})
    assert failed.value.code == -32021  # 2026: a missing client capability


@pytest.mark.parametrize("version", ["2026-07-28", "2025-06-18"])
async def test_roots_logs_and_listing_on_both_eras(version: str) -> None:
    app = load_app(str(ROOT / "tests/apps/interaction.py"))
    async with Client(
        app,
        protocol_version=version,
        roots=["file:///work", {"uri": "file:///tmp", "name": "tmp"}],
        elicitation_handler=lambda m, s: {"name": "Ana"},
        sampling_handler=lambda messages, params: {"content": {"type": "text", "text": "hi"}, "model": "m1"},
    ) as client:
        roots = await client.call_tool("roots")
        talk = await client.call_tool("survey")
        names = {t["name"] for t in await client.list_tools()}
    assert roots.text == "file:///work,file:///tmp"
    assert talk.text == "accept:Ana|hi"
    assert "roots" in names
    if version == "2025-06-18":  # logs reach a legacy client on the call's stream (2026: only with a log level)
        assert "starting" in client.logs


async def test_an_unknown_protocol_version_is_refused_up_front() -> None:
    with pytest.raises(ValueError, match="unknown protocol version"):
        Client(approvals, protocol_version="2024-01-01")


def test_the_client_on_another_event_loop_says_what_to_write() -> None:
    import anyio

    app = load_app(str(ROOT / "examples/weather/server.py"))

    async def use() -> None:
        async with Client(app):
            pass

    with pytest.raises(RuntimeError, match="runs on asyncio: .* `anyio_backend` that returns 'asyncio'"):
        anyio.run(use, backend="trio")
