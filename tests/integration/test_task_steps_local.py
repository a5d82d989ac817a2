"""Checkpointed steps and sleeps where tasks run in process: through the test client (`lambda_mcp.testing.Client`)
and through `lambda-mcp dev` over HTTP, on both eras (the 2026 tasks extension; 2025-11-25 `params.task` +
`tasks/result`). Waits are skipped there (time skipping): the task `step A -> sleep 2 h -> step B -> elicit ->
step C` completes at once, each step's function runs once, and the log says what was skipped.
"""

from __future__ import annotations

import logging
import secrets
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from lambda_mcp.protocol.ids import TaskInputId
from lambda_mcp.protocol.request_headers import client_headers
from lambda_mcp.testing import Client
from tests.apps.checkpointed import app, runs
from tests.support.legacy_client import LegacyClient
from tests.support.polling import wait_until
from tests.support.processes import ServerProcess, lambda_mcp_dev, ran
from tests.support.recorder import Recorder

pytestmark = pytest.mark.anyio
MODERN = "2026-07-28"
ERAS = [MODERN, "2025-11-25"]
SKIPPED = "skipping a wait of 2 h (lambda-mcp dev; --real-waits keeps it)"
GO = {"action": "accept", "content": {"go": True}}
PROGRESS = [(1, 5, "in A"), (2, 5, "after A"), (3, 5, "after B"), (4, 5, "answered"), (5, 5, "in C")]


@pytest.fixture(autouse=True)
def counts(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("LAMBDA_MCP_TEST_COUNTS", str(tmp_path / "counts"))
    return tmp_path / "counts"


def _accept(message: str, schema: dict[str, Any]) -> dict[str, Any]:
    return {"go": True}


@pytest.mark.parametrize("era", ERAS)
async def test_the_test_client_runs_each_step_once_and_skips_the_two_hour_sleep(
    era: str, caplog: pytest.LogCaptureFixture
) -> None:
    label = secrets.token_hex(4)
    started = time.monotonic()
    with caplog.at_level(logging.WARNING, logger="lambda_mcp"):
        async with Client(app, protocol_version=era, elicitation_handler=_accept) as client:
            result = await client.call_tool("pipeline", {"label": label}, task=True)
    assert result.text == "a B[1, 2] c=True"
    assert runs(label) == {"run": 3, "A": 1, "B": 1, "C": 1}  # from the top 3 times: start, after the sleep, answer
    assert time.monotonic() - started < 30
    assert any(SKIPPED in record.getMessage() for record in caplog.records)


async def test_a_legacy_tasks_progress_from_inside_and_between_steps_arrives_once_in_order() -> None:
    """The second and third runs skip step A (and B): numbered by their ordinal in the run, their
    messages took the positions the first run's had filled, and "after B" never reached the client."""
    seen: list[tuple[float, float | None, str | None]] = []

    def on_progress(progress: float, total: float | None, message: str | None) -> None:
        seen.append((progress, total, message))

    label = secrets.token_hex(4)
    async with Client(app, protocol_version="2025-11-25", elicitation_handler=_accept) as client:
        result = await client.call_tool("pipeline", {"label": label}, task=True, progress_handler=on_progress)
    assert result.text == "a B[1, 2] c=True"
    assert seen == PROGRESS


async def test_outside_a_task_a_step_just_runs_and_runs_again_on_every_round() -> None:
    """A 2026 client without the tasks extension calls the tool inline: nothing is recorded, so the MRTR
    round that answers the question runs steps A and B again; the sleep is skipped here too."""
    label = secrets.token_hex(4)
    async with Client(app, tasks=False, elicitation_handler=_accept) as client:
        result = await client.call_tool("pipeline", {"label": label})
    assert result.text == "a B[1, 2] c=True"
    assert runs(label) == {"run": 2, "A": 2, "B": 2, "C": 1}


async def test_real_waits_keep_a_sleep_and_the_task_wakes_after_it() -> None:
    label = secrets.token_hex(4)
    async with Client(app, real_waits=True) as client:
        task = await client.start_task("nap", {"label": label, "seconds": 0.4})
        started = time.monotonic()
        result = await client.task_result(task["taskId"])
        assert result.text == "rested" and time.monotonic() - started >= 0.35
    assert runs(label) == {"run": 2, "before": 1, "after": 1}


# -- lambda-mcp dev over HTTP ---------------------------------------------------------------------------
@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[ServerProcess, Path]]:
    base = tmp_path_factory.mktemp("steps-dev")
    env = {"LAMBDA_MCP_TEST_COUNTS": str(base / "counts")}
    process = lambda_mcp_dev("tests/apps/checkpointed.py", through_lambda=False, log=base / "dev.log", env=env)
    yield process, base / "counts"
    process.stop()


def _counted(counts: Path, label: str) -> dict[str, int]:
    words = (counts / label).read_text().split() if (counts / label).exists() else []
    return {word: words.count(word) for word in set(words)}


def _modern(url: str, method: str, params: dict[str, Any]) -> dict[str, Any]:
    """One 2026 request to `lambda-mcp dev` (a client declaring elicitation and the tasks extension)."""
    capabilities = {"elicitation": {}, "extensions": {"io.modelcontextprotocol/tasks": {}}}
    meta = {
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientCapabilities": capabilities,
    }
    headers = {"content-type": "application/json", "accept": "application/json, text/event-stream"}
    headers |= {"mcp-protocol-version": MODERN, **client_headers(method, params, None)}
    body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": {**params, "_meta": meta}}
    reply = httpx.post(url, json=body, headers=headers, timeout=30)
    answer: dict[str, Any] = reply.json()
    assert reply.status_code == 200 and "result" in answer, reply.text
    result: dict[str, Any] = answer["result"]
    return result


def _status(url: str, task_id: str, status: str) -> dict[str, Any]:
    def reached() -> dict[str, Any] | None:
        task = _modern(url, "tasks/get", {"taskId": task_id})
        return task if task["status"] == status else None

    found: dict[str, Any] = wait_until(reached, what=f"task {task_id} to be {status}")
    return found


def test_lambda_mcp_dev_runs_the_2026_task_through_a_skipped_sleep_and_an_answer(
    server: tuple[ServerProcess, Path],
) -> None:
    process, counts = server
    label = secrets.token_hex(4)
    task_id = _modern(process.url, "tools/call", {"name": "pipeline", "arguments": {"label": label}})["taskId"]
    assert list(_status(process.url, task_id, "input_required")["inputRequests"]) == ["go"]
    _modern(process.url, "tasks/update", {"taskId": task_id, "inputResponses": {"go": GO}})
    done = _status(process.url, task_id, "completed")
    assert done["result"]["content"][0]["text"] == "a B[1, 2] c=True"
    assert _counted(counts, label) == {"run": 3, "A": 1, "B": 1, "C": 1}
    assert SKIPPED in process.log_text()


def test_lambda_mcp_dev_runs_the_legacy_task_and_tasks_result_relays_its_progress_once_in_order(
    server: tuple[ServerProcess, Path], recorder: Recorder
) -> None:
    process, counts = server
    label = secrets.token_hex(4)
    client = LegacyClient(process.url, recorder, capabilities={"elicitation": {}})
    params = {"name": "pipeline", "arguments": {"label": label}, "task": {}, "_meta": {"progressToken": "p"}}
    task_id = client.call("tools/call", params)["result"]["task"]["taskId"]
    wait_until(lambda: client.call("tasks/get", {"taskId": task_id})["result"]["status"] == "input_required")
    # the response to the question tasks/result relays
    client.send({"jsonrpc": "2.0", "id": TaskInputId(task_id, "go").format(), "result": GO})
    wait_until(lambda: client.call("tasks/get", {"taskId": task_id})["result"]["status"] == "completed")
    seen = client.post("tasks/result", {"taskId": task_id})
    progress = [m["params"] for m in seen if m.get("method") == "notifications/progress"]
    assert [(p["progress"], p["total"], p["message"]) for p in progress] == PROGRESS
    assert seen[-1]["result"]["content"][0]["text"] == "a B[1, 2] c=True"
    assert _counted(counts, label) == {"run": 3, "A": 1, "B": 1, "C": 1}


@pytest.mark.slow  # starts its own dev server
def test_lambda_mcp_dev_real_waits_keeps_a_sleep(tmp_path: Path) -> None:
    env = {"LAMBDA_MCP_TEST_COUNTS": str(tmp_path / "counts")}
    process = lambda_mcp_dev(
        "tests/apps/checkpointed.py",
        through_lambda=False,
        log=tmp_path / "dev.log",
        env=env,
        extra_args=["--real-waits"],
    )
    try:
        label = secrets.token_hex(4)
        started = time.monotonic()
        call = {"name": "nap", "arguments": {"label": label, "seconds": 1.5}}
        task_id = _modern(process.url, "tools/call", call)["taskId"]
        asleep = _status(process.url, task_id, "working")
        assert asleep["ttlMs"] > 0 and _counted(tmp_path / "counts", label).get("after") is None
        done = _status(process.url, task_id, "completed")
        assert done["result"]["content"][0]["text"] == "rested" and time.monotonic() - started >= 1.5
        assert _counted(tmp_path / "counts", label) == {"run": 2, "before": 1, "after": 1}
        assert "skipping a wait" not in process.log_text()
    finally:
        process.stop()


@pytest.mark.slow  # starts its own dev server
def test_lambda_mcp_dev_lambda_skips_the_sleep_through_the_queue_and_the_real_worker(tmp_path: Path) -> None:
    """`dev --lambda`: the sleeping run ends ("asleep"), its wake-up goes through the local task queue at
    once, and the real worker handler runs the task on."""
    env = {"LAMBDA_MCP_TEST_COUNTS": str(tmp_path / "counts")}
    process = lambda_mcp_dev("tests/apps/checkpointed.py", through_lambda=True, log=tmp_path / "dev.log", env=env)
    try:
        label = secrets.token_hex(4)
        task_id = _modern(process.url, "tools/call", {"name": "pipeline", "arguments": {"label": label}})["taskId"]
        _status(process.url, task_id, "input_required")
        _modern(process.url, "tasks/update", {"taskId": task_id, "inputResponses": {"go": GO}})
        assert _status(process.url, task_id, "completed")["result"]["content"][0]["text"] == "a B[1, 2] c=True"
        assert _counted(tmp_path / "counts", label) == {"run": 3, "A": 1, "B": 1, "C": 1}
        assert ran(process, task_id, "asleep") and SKIPPED in process.log_text()
    finally:
        process.stop()
