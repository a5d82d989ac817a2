"""2026 tasks extension over ASGI: tasks are offered only where something can run them."""

from __future__ import annotations

from typing import Any

import pytest

from lambda_mcp.config import Settings
from tests.support.client import MCPTestClient, conformance_kit
from tests.support.polling import until

pytestmark = pytest.mark.anyio
TASKS = {"extensions": {"io.modelcontextprotocol/tasks": {}}}


async def test_a_lambda_kit_without_a_worker_offers_no_tasks() -> None:
    mcp = MCPTestClient(conformance_kit(streaming=False))
    try:
        discovered = await mcp.modern("server/discover")
        assert "extensions" not in discovered.result["capabilities"]
        required = await mcp.modern(
            "tools/call",
            {"name": "failing_job", "arguments": {}},
            meta={"io.modelcontextprotocol/clientCapabilities": TASKS},
        )
        assert required.error["code"] == -32021
        optional = await mcp.modern(
            "tools/call",
            {"name": "slow_compute", "arguments": {"seconds": 0}},
            meta={"io.modelcontextprotocol/clientCapabilities": TASKS},
        )
        assert optional.result["resultType"] == "complete" and optional.result["content"]
        assert mcp.recorder.violations == []
    finally:
        await mcp.close()


async def test_a_parked_task_resumes_to_completed_after_tasks_update() -> None:
    mcp = MCPTestClient(conformance_kit(streaming=True, settings=Settings(state_key=b"k")))
    caps = {"io.modelcontextprotocol/clientCapabilities": {**TASKS, "elicitation": {}}}
    try:
        created = await mcp.modern("tools/call", {"name": "confirm_delete", "arguments": {"filename": "a"}}, meta=caps)
        task_id = created.result["taskId"]
        assert created.result["resultType"] == "task" and created.result["status"] == "working"

        async def status(wanted: str) -> dict[str, Any] | None:
            got = (await mcp.modern("tasks/get", {"taskId": task_id}, meta=caps, headers={"mcp-name": task_id})).result
            return got if got["status"] == wanted else None

        got = await until(lambda: status("input_required"), what="the task to ask")
        assert list(got["inputRequests"]) == ["confirm"]
        answer = {"confirm": {"action": "accept", "content": {"confirm": True}}, "stale-key": {"x": 1}}
        ack = await mcp.modern(
            "tasks/update", {"taskId": task_id, "inputResponses": answer}, meta=caps, headers={"mcp-name": task_id}
        )
        assert ack.result == {"resultType": "complete", "_meta": ack.result["_meta"]}
        got = await until(lambda: status("completed"), what="the task to complete")
        assert got["result"]["content"][0]["text"] == "deleted 'a'"
        cancelled = await mcp.modern("tasks/cancel", {"taskId": task_id}, meta=caps, headers={"mcp-name": task_id})
        assert cancelled.status == 200  # cancelling a final task is acknowledged and changes nothing
        final = await mcp.modern("tasks/get", {"taskId": task_id}, meta=caps, headers={"mcp-name": task_id})
        assert final.result["status"] == "completed"
        assert mcp.recorder.violations == []
    finally:
        await mcp.close()
