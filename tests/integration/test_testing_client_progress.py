"""Progress through `lambda_mcp.testing.Client`, as an app's own tests use it: `call_tool(...,
progress_handler=fn)` sends a progress token and hands each notification to `fn` as it arrives, on every
era, for a 2025-11-25 task through `tasks/result`; a 2026 task (no progress channel) just completes."""

from __future__ import annotations

from typing import Any

import pytest

from lambda_mcp import Context, MCPApp
from lambda_mcp.testing import Client

pytestmark = pytest.mark.anyio
ERAS = ["2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26"]

app = MCPApp("progress")


@app.tool
async def export(rows: int, ctx: Context) -> str:
    """Reports progress, with and without a total and a message."""
    await ctx.report_progress(1, rows, "started")
    await ctx.report_progress(2)
    await ctx.report_progress(rows, rows, "done")
    return f"exported {rows}"


@app.tool
async def confirm_export(ctx: Context) -> str:
    """Reports progress, then asks: the progress reaches the client before the question does."""
    await ctx.report_progress(1, 2, "prepared")
    answer = await ctx.elicit("Export now?", bool)
    return f"confirmed {answer.data}"


@app.tool(task_support="optional")
async def nightly(ctx: Context) -> str:
    """A task where the client supports tasks."""
    await ctx.report_progress(1, 2, "half way")
    return "nightly done"


@pytest.mark.parametrize("era", ERAS)
async def test_each_progress_notification_reaches_the_handler_in_order(era: str) -> None:
    seen: list[tuple[float, float | None, str | None]] = []

    def on_progress(progress: float, total: float | None, message: str | None) -> None:
        seen.append((progress, total, message))

    async with Client(app, protocol_version=era) as client:
        result = await client.call_tool("export", {"rows": 3}, progress_handler=on_progress)
        assert result.text == "exported 3"
        assert seen == [(1, 3, "started"), (2, None, None), (3, 3, "done")]
        progress = [n for n in client.notifications if n["method"] == "notifications/progress"]
        assert len(progress) == 3 and len({n["params"]["progressToken"] for n in progress}) == 1


@pytest.mark.parametrize("era", ["2026-07-28", "2025-11-25"])
async def test_an_async_handler_gets_progress_before_the_tool_asks(era: str) -> None:
    seen: list[tuple[float, float | None, str | None]] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        seen.append((progress, total, message))

    def on_elicit(message: str, schema: dict[str, Any]) -> dict[str, Any]:
        assert seen == [(1, 2, "prepared")]  # delivered as it arrived, not after the call
        return {"value": True}

    async with Client(app, protocol_version=era, elicitation_handler=on_elicit) as client:
        result = await client.call_tool("confirm_export", progress_handler=on_progress)
    assert result.text == "confirmed True" and seen == [(1, 2, "prepared")]


async def test_a_legacy_task_relays_its_progress_through_tasks_result() -> None:
    seen: list[tuple[float, float | None, str | None]] = []
    async with Client(app, protocol_version="2025-11-25") as client:
        result = await client.call_tool("nightly", task=True, progress_handler=lambda *progress: seen.append(progress))
        assert result.text == "nightly done"
        assert client.notifications[-1]["params"]["_meta"]["io.modelcontextprotocol/related-task"]
    assert seen == [(1, 2, "half way")]


async def test_a_2026_task_has_no_progress_channel_and_just_completes() -> None:
    seen: list[Any] = []
    async with Client(app) as client:
        result = await client.call_tool("nightly", progress_handler=lambda *progress: seen.append(progress))
        assert result.text == "nightly done" and seen == []
    async with Client(app, tasks=False) as client:  # no task support declared: it runs inline, with progress
        await client.call_tool("nightly", progress_handler=lambda *progress: seen.append(progress))
    assert seen == [(1, 2, "half way")]


@pytest.mark.parametrize("era", ["2026-07-28", "2025-11-25"])
async def test_without_a_handler_no_token_is_sent_and_no_progress_comes(era: str) -> None:
    seen: list[Any] = []
    async with Client(app, protocol_version=era) as client:
        assert (await client.call_tool("export", {"rows": 2})).text == "exported 2"
        assert not [n for n in client.notifications if n["method"] == "notifications/progress"]
        await client.call_tool("export", {"rows": 2}, progress_handler=lambda *progress: seen.append(progress))
        await client.call_tool("export", {"rows": 5})  # the handler was the earlier call's only
    assert seen == [(1, 2, "started"), (2, None, None)]
