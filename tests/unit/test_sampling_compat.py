"""`ctx.sample` returned the result dict before it returned a `Sampled`: code written for the dict
(`result.get("content")`, `result["content"]`, `"model" in result`) keeps working, with a
`DeprecationWarning` that names what to write instead."""

from __future__ import annotations

import warnings
from typing import Any

import pytest

from lambda_mcp import Context, MCPApp
from lambda_mcp.testing import Client
from lambda_mcp.types import Sampled

RESULT = {"role": "assistant", "content": {"type": "text", "text": "sunny"}, "model": "m1", "stopReason": "endTurn"}


def test_dict_style_reads_answer_as_the_dict_did_and_say_what_to_write() -> None:
    sampled = Sampled.of(dict(RESULT))
    with pytest.warns(DeprecationWarning, match=r"instead of result.get\('content'\) write result.content") as got:
        assert sampled.get("content") == {"type": "text", "text": "sunny"}
    assert "result.text" in str(got[0].message) and "until 0.3" in str(got[0].message)
    assert got[0].filename == __file__  # points at the caller's line, not the kit's
    with pytest.warns(DeprecationWarning, match=r"instead of result\['model'\] write result.model"):
        assert sampled["model"] == "m1"
    with pytest.warns(DeprecationWarning, match=r"write result.stop_reason"):
        assert sampled.get("stopReason") == "endTurn"
    with pytest.warns(DeprecationWarning, match=r"write result.raw.get\('_meta'\)"):
        assert sampled.get("_meta", "none") == "none"
    with pytest.warns(DeprecationWarning, match=r"instead of 'content' in result write 'content' in result.raw"):
        assert "content" in sampled
    with pytest.warns(DeprecationWarning):
        assert "nothing" not in sampled
    with pytest.warns(DeprecationWarning), pytest.raises(KeyError):
        sampled["nothing"]


def test_the_attributes_warn_nothing() -> None:
    sampled = Sampled.of(dict(RESULT))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert (sampled.text, sampled.content, sampled.model, sampled.stop_reason) == (
            "sunny",
            {"type": "text", "text": "sunny"},
            "m1",
            "endTurn",
        )
        assert sampled.raw == RESULT


@pytest.mark.anyio
@pytest.mark.parametrize("version", ["2026-07-28", "2025-06-18"])
async def test_an_app_written_for_the_dict_still_runs(version: str) -> None:
    app = MCPApp("old-sampling")

    @app.tool()
    async def forecast(city: str, ctx: Context) -> str:
        """Written against the old API: the result was a dict."""
        result: Any = await ctx.sample(f"Weather in {city}?", max_tokens=50)
        return f"{result['content']['text']} ({result.get('model')})"

    def on_sample(messages: list[dict[str, Any]], params: dict[str, Any]) -> dict[str, Any]:
        return {"role": "assistant", "content": {"type": "text", "text": "sunny"}, "model": "m1"}

    with pytest.warns(DeprecationWarning, match="ctx.sample\\(\\) returns a Sampled"):
        async with Client(app, protocol_version=version, sampling_handler=on_sample) as client:
            result = await client.call_tool("forecast", {"city": "Oslo"})
    assert not result.is_error and result.text == "sunny (m1)"
