"""`lambda_mcp.testing.Client` as a user's pytest file uses it for scoped tools, failing tools and tasks:
`principal=`/`scopes=` (enforced by the kit as under auth `jwt`), `claims=` (the token's claims, as
`ctx.claims`), `raise_exceptions=True`, and `task="auto"` for tools that run only as tasks."""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

import pytest

from lambda_mcp import Context, MCPApp, ToolError
from lambda_mcp.config import Settings
from lambda_mcp.middleware import CallNext, RequestInfo
from lambda_mcp.testing import Client, RequestFailed

pytestmark = pytest.mark.anyio
ERAS = ["2026-07-28", "2025-11-25", "2025-06-18"]
RUNS: Counter[str] = Counter()

app = MCPApp("reports")


@app.tool(scopes=["reports:read"])
def report() -> str:
    """The monthly report (needs reports:read)."""
    RUNS["report"] += 1
    return "12 expenses, 92.50 EUR"


@app.tool()
def whoami(ctx: Context) -> str:
    """Who is calling, and with which scopes."""
    return f"{ctx.principal} {sorted(ctx.scopes or ())}"


@app.resource("reports://latest", scopes=["reports:read"])
def latest() -> str:
    RUNS["latest"] += 1
    return "latest report"


@app.resource("reports://month/{month}", scopes=["reports:read"])
def month(month: str) -> str:
    RUNS["month"] += 1
    return f"report for {month}"


@app.prompt(scopes=["reports:write"])
def draft(topic: str) -> str:
    RUNS["draft"] += 1
    return f"Draft a report on {topic}"


@app.tool()
def broken(amount: int) -> str:
    """Fails unexpectedly."""
    raise ValueError(f"cannot handle {amount}")


@app.tool()
def refusing() -> str:
    """Fails on purpose, with a message for the user."""
    raise ToolError("reports are closed today")


@app.resource("reports://broken")
def broken_resource() -> str:
    raise KeyError("no such report")


@app.tool(task_support="required")
async def archive(year: int, ctx: Context) -> str:
    """Runs only as a task."""
    RUNS["archive"] += 1
    return f"archived {year} for {ctx.principal}"


@app.tool(task_support="required")
async def broken_archive() -> str:
    raise RuntimeError("the archive is on fire")


@pytest.fixture(autouse=True)
def _no_runs() -> None:
    RUNS.clear()


# -- principal and scopes -------------------------------------------------------------------
async def test_a_scoped_tool_in_three_lines() -> None:
    async with Client(app, scopes=["reports:read"]) as client:
        assert (await client.call_tool("report")).text == "12 expenses, 92.50 EUR"


@pytest.mark.parametrize("version", ERAS)
async def test_with_its_scope_a_scoped_tool_resource_and_prompt_are_listed_and_served(version: str) -> None:
    async with Client(app, protocol_version=version, scopes=["reports:read", "reports:write"]) as client:
        assert {"report", "whoami"} <= {t["name"] for t in await client.list_tools()}
        assert "reports://latest" in {r["uri"] for r in await client.list_resources()}
        assert "reports://month/{month}" in {t["uriTemplate"] for t in await client.list_resource_templates()}
        assert "draft" in {p["name"] for p in await client.list_prompts()}
        assert (await client.call_tool("report")).text == "12 expenses, 92.50 EUR"
        assert (await client.read_resource("reports://latest"))[0]["text"] == "latest report"
        assert (await client.read_resource("reports://month/05"))[0]["text"] == "report for 05"
        prompt = await client.get_prompt("draft", {"topic": "travel"})
        assert prompt["messages"][0]["content"]["text"] == "Draft a report on travel"
    assert RUNS == {"report": 1, "latest": 1, "month": 1, "draft": 1}


@pytest.mark.parametrize("version", ERAS)
async def test_without_its_scope_it_is_absent_and_refused_and_never_runs(version: str) -> None:
    async with Client(app, protocol_version=version, principal="bob", scopes=["other"]) as client:
        assert {t["name"] for t in await client.list_tools()} == {
            "whoami",
            "broken",
            "refusing",
            "archive",
            "broken_archive",
        }
        assert {r["uri"] for r in await client.list_resources()} == {"reports://broken"}
        assert await client.list_resource_templates() == []
        assert await client.list_prompts() == []
        refusals = [
            client.call_tool("report"),
            client.read_resource("reports://latest"),
            client.read_resource("reports://month/05"),
            client.get_prompt("draft", {"topic": "travel"}),
        ]
        for refused in refusals:
            with pytest.raises(RequestFailed) as failed:
                await refused
            assert failed.value.status == 403 and failed.value.code == -32600
            assert "lacks a scope" in failed.value.message and "the client has other" in failed.value.message
        with pytest.raises(RequestFailed) as failed:
            await client.call_tool("report")
        assert "tools/call needs scopes reports:read" in failed.value.message
        # the scoped prompt's completions are refused too
        with pytest.raises(RequestFailed) as failed:
            await client.complete({"type": "ref/prompt", "name": "draft"}, "topic", "t")
        assert failed.value.status == 403
    assert RUNS == {}


async def test_a_principal_alone_holds_no_scopes_as_a_token_without_a_scope_claim() -> None:
    async with Client(app, principal="alice") as client:
        assert "report" not in {t["name"] for t in await client.list_tools()}
        assert (await client.call_tool("whoami")).text == "alice []"
    assert RUNS == {}


@pytest.mark.parametrize("version", ERAS)
async def test_the_tool_sees_the_principal_and_scopes_given(version: str) -> None:
    async with Client(app, protocol_version=version, principal="alice", scopes=["write", "read"]) as client:
        assert (await client.call_tool("whoami")).text == "alice ['read', 'write']"
    async with Client(app, protocol_version=version, scopes=["read"]) as client:
        assert (await client.call_tool("whoami")).text == "test-client ['read']"


async def test_without_principal_or_scopes_nothing_is_enforced() -> None:
    async with Client(app) as client:
        assert "report" in {t["name"] for t in await client.list_tools()}
        assert (await client.call_tool("report")).text == "12 expenses, 92.50 EUR"
        assert (await client.call_tool("whoami")).text == "None []"
    assert RUNS == {"report": 1}


async def test_scopes_every_request_needs_are_enforced_too() -> None:
    settings = Settings(state_key=b"k" * 32, auth_scopes=("mcp",))
    async with Client(app, settings=settings, scopes=["mcp", "reports:read"]) as client:
        assert (await client.call_tool("report")).text == "12 expenses, 92.50 EUR"
    with pytest.raises(RequestFailed) as failed:
        async with Client(app, settings=settings, scopes=["reports:read"]):
            pass
    assert failed.value.status == 403


async def test_the_tasks_of_a_caller_carry_its_identity() -> None:
    async with Client(app, principal="alice", scopes=[]) as client:
        assert (await client.call_tool("archive", {"year": 2025})).text == "archived 2025 for alice"


async def test_a_client_with_a_caller_is_not_warned_that_scopes_go_unenforced(caplog: pytest.LogCaptureFixture) -> None:
    fresh = MCPApp("fresh")  # the kit warns once per app: a new one, never warned
    fresh.tool(scopes=["s"])(report)
    async with Client(fresh, scopes=["s"]) as client:
        assert (await client.call_tool("report")).text == "12 expenses, 92.50 EUR"
        assert client.kit.access.guard.mode == "test"
    assert not [r for r in caplog.records if "not enforced" in r.getMessage()]


def test_a_misspelt_identity_is_refused_up_front() -> None:
    with pytest.raises(TypeError, match="list of scope names"):
        Client(app, scopes="reports:read")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="non-empty string"):
        Client(app, principal="")
    with pytest.raises(TypeError, match="claims must be a mapping"):
        Client(app, claims=["groups"])  # type: ignore[arg-type]


# -- claims ---------------------------------------------------------------------------------
claimed = MCPApp("claimed")
SEEN_BY_MIDDLEWARE: list[tuple[bool, dict[str, Any], bool]] = []
"""Per tools/call: whether it is a task's run, the claims the middleware saw, and whether it could change them."""


@claimed.middleware
async def note_claims(request: RequestInfo, call_next: CallNext) -> dict[str, Any]:
    if request.method == "tools/call":
        try:
            request.claims["groups"] = ["admins"]  # type: ignore[index]
            changed = True
        except TypeError:
            changed = False
        SEEN_BY_MIDDLEWARE.append((request.task_id is not None, dict(request.claims), changed))
    return await call_next(request)


@claimed.tool()
def admin_report(ctx: Context) -> str:
    """Only for the admins group."""
    if "admins" not in ctx.claims.get("groups", []):
        raise ToolError("only admins may read the report")
    return f"report for {ctx.claims['email']} ({ctx.principal})"


@claimed.tool()
async def confirmed_claims(ctx: Context) -> str:
    """The caller's claims, after asking the user (a 2026 call runs again with the answer)."""
    await ctx.elicit("Show them?", {"type": "object", "properties": {}})
    return json.dumps(dict(ctx.claims), sort_keys=True)


@claimed.tool(task_support="required")
async def later_claims(ctx: Context) -> str:
    """The caller's claims, from a task's run."""
    return json.dumps(dict(ctx.claims), sort_keys=True)


ADMIN = {"email": "ana@example.com", "groups": ["staff", "admins"]}


def _accept(message: str, schema: dict[str, Any]) -> dict[str, Any]:
    return {"action": "accept", "content": {}}


@pytest.fixture(autouse=True)
def _nothing_seen() -> None:
    SEEN_BY_MIDDLEWARE.clear()


@pytest.mark.parametrize("version", ERAS)
async def test_tools_and_middleware_see_the_claims_given_read_only(version: str) -> None:
    given = {**ADMIN}
    async with Client(claimed, protocol_version=version, claims=given, elicitation_handler=_accept) as client:
        given["email"] = "changed@example.com"  # the client copied them
        assert (await client.call_tool("admin_report")).text == "report for ana@example.com (test-client)"
        assert json.loads((await client.call_tool("confirmed_claims")).text) == ADMIN
    runs = 3 if version == "2026-07-28" else 2  # a 2026 call that asks runs twice, each through the middleware
    assert [(False, ADMIN, False)] * runs == SEEN_BY_MIDDLEWARE


@pytest.mark.parametrize("version", ["2026-07-28", "2025-11-25"])
async def test_a_tasks_run_sees_the_claims_of_its_caller(version: str) -> None:
    async with Client(claimed, protocol_version=version, principal="ana", claims=ADMIN) as client:
        assert json.loads((await client.call_tool("later_claims", task=True)).text) == ADMIN
    assert (True, ADMIN, False) in SEEN_BY_MIDDLEWARE


async def test_claims_that_lack_the_group_are_refused_by_the_tool_and_none_is_anonymous() -> None:
    async with Client(claimed, claims={"groups": ["staff"]}) as client:
        refused = await client.call_tool("admin_report")
        assert refused.is_error and refused.text == "only admins may read the report"
    async with Client(claimed, elicitation_handler=_accept) as anonymous:  # auth `none`: no claims
        assert (await anonymous.call_tool("admin_report")).is_error
        assert (await anonymous.call_tool("confirmed_claims")).text == "{}"
        assert (await anonymous.call_tool("later_claims", task=True)).text == "{}"


# -- raise_exceptions -----------------------------------------------------------------------
@pytest.mark.parametrize("version", ERAS)
async def test_raise_exceptions_raises_the_tools_own_exception(version: str) -> None:
    async with Client(app, protocol_version=version, raise_exceptions=True) as client:
        with pytest.raises(ValueError, match="cannot handle 7") as raised:
            await client.call_tool("broken", {"amount": 7})
        assert any(frame.name == "broken" for frame in raised.traceback)  # the tool's own frame
        refused = await client.call_tool("refusing")  # a ToolError is still the user's error result
        assert refused.is_error and refused.text == "reports are closed today"
        with pytest.raises(KeyError, match="no such report"):
            await client.read_resource("reports://broken")
        assert (await client.call_tool("whoami")).text == "None []"  # the client goes on working


async def test_without_raise_exceptions_the_failure_is_the_generic_result() -> None:
    async with Client(app) as client:
        result = await client.call_tool("broken", {"amount": 7})
        with pytest.raises(RequestFailed) as failed:
            await client.read_resource("reports://broken")
    assert result.is_error and "failed unexpectedly (reference" in result.text
    assert failed.value.code == -32603


@pytest.mark.parametrize("version", ["2026-07-28", "2025-11-25"])
async def test_raise_exceptions_raises_a_tasks_exception(version: str) -> None:
    async with Client(app, protocol_version=version, raise_exceptions=True) as client:
        with pytest.raises(RuntimeError, match="the archive is on fire"):
            await client.call_tool("broken_archive")


async def test_one_clients_exceptions_are_not_raised_in_another() -> None:
    async with Client(app, raise_exceptions=True) as raising, Client(app) as quiet:
        assert (await quiet.call_tool("broken", {"amount": 1})).is_error
        assert (await raising.call_tool("whoami")).text == "None []"


# -- task="auto" ----------------------------------------------------------------------------
@pytest.mark.parametrize("version", ["2026-07-28", "2025-11-25"])
async def test_a_required_task_tool_is_called_without_task_true(version: str) -> None:
    async with Client(app, protocol_version=version) as client:
        assert (await client.call_tool("archive", {"year": 2024})).text == "archived 2024 for None"
        assert (await client.call_tool("archive", {"year": 2023}, task=True)).text == "archived 2023 for None"
        assert (await client.call_tool("whoami")).text == "None []"  # a plain tool stays a plain call
    assert RUNS == {"archive": 2}


async def test_task_false_still_forces_a_plain_call() -> None:
    async with Client(app, protocol_version="2025-11-25") as client:
        with pytest.raises(RequestFailed) as failed:
            await client.call_tool("archive", {"year": 2024}, task=False)
    assert failed.value.code == -32601 and "must be called as a task" in failed.value.message
    assert RUNS == {}
