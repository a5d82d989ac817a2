"""The replay ledger (issue 22): two questions without `key=` in one handler are two questions on every
wire and transport, in a task too, and one explicit key asked twice is a clear developer error.

Before the ledger numbered questions, both got the key `elicit`: the 2026 wire asked once and answered
`A/A`, a buffered legacy call asked twice and still answered `A/A`, and a task asked once."""

from __future__ import annotations

from typing import Any

import pytest

from lambda_mcp.loader import load_app
from lambda_mcp.testing import Client
from tests.support.processes import ROOT

pytestmark = pytest.mark.anyio
interaction = load_app(str(ROOT / "tests/apps/interaction.py"))
ANSWERS = {"First?": "A", "Second?": "B"}


class Asked:
    """The client's side: answers each question by its message and each sample by its text, and counts."""

    def __init__(self) -> None:
        self.questions: list[str] = []
        self.samples: list[str] = []

    def elicit(self, message: str, schema: dict[str, Any]) -> dict[str, Any]:
        self.questions.append(message)
        return {"action": "accept", "content": {"name": ANSWERS[message]}}

    def sample(self, messages: list[dict[str, Any]], params: dict[str, Any]) -> str:
        text = messages[-1]["content"]["text"]
        self.samples.append(text)
        return {"one": "x", "two": "y"}[text]


CASES = [
    ("twice", "2026-07-28"),
    ("twice", "2025-11-25"),
    ("twice", "2025-06-18"),
    ("twice_as_task", "2026-07-28"),
    ("twice_as_task", "2025-11-25"),  # 2025-06-18 has no tasks
]


@pytest.mark.parametrize(("tool", "version"), CASES)
async def test_two_questions_without_keys_are_two_questions(version: str, tool: str) -> None:
    asked = Asked()
    async with Client(
        interaction, protocol_version=version, elicitation_handler=asked.elicit, sampling_handler=asked.sample
    ) as client:
        result = await client.call_tool(tool, task=tool == "twice_as_task" and version != "2026-07-28")
    assert result.text == "A/B|x/y"
    assert asked.questions == ["First?", "Second?"] and asked.samples == ["one", "two"]


@pytest.mark.parametrize("version", ["2026-07-28", "2025-11-25"])
async def test_one_explicit_key_asked_twice_is_a_developer_error(
    version: str, caplog: pytest.LogCaptureFixture
) -> None:
    asked = Asked()
    async with Client(interaction, protocol_version=version, elicitation_handler=asked.elicit) as client:
        result = await client.call_tool("same_key_twice")
    assert result.is_error  # the handler raised: the client sees a reference, the log says why
    assert asked.questions == ["First?"]
    assert any("'name' was already asked for" in str(r.exc_info[1]) for r in caplog.records if r.exc_info)


@pytest.mark.parametrize("version", ["2026-07-28", "2025-11-25"])
async def test_every_round_of_a_call_reads_one_idempotency_key_and_another_call_another(version: str) -> None:
    keys_read = interaction.tools["keyed_rounds"].fn.__globals__["keys_read"]
    keys_read.clear()
    async with Client(interaction, protocol_version=version, elicitation_handler=Asked().elicit) as client:
        first = (await client.call_tool("keyed_rounds")).text
        second = (await client.call_tool("keyed_rounds")).text
    # the key is minted lazily; one the first round never read is still sealed for the rounds after it.
    # 2026 runs the tool again for each answer (runs 2 and 3 read the key); a legacy stream runs it once
    runs = 2 if version == "2026-07-28" else 1
    assert keys_read == [first] * runs + [second] * runs and first != second and len(first) >= 16
