"""Issue 39: an API's OpenAPI operations served as tools, end to end against a stand-in API on loopback
(tests/support/petstore_api.py records what it gets), through `lambda_mcp.testing.Client` and through a real
`lambda-mcp dev --lambda` process (tests/apps/openapi/petstore_app.py), on both protocol eras.

A SigV4 door (tests/support/sigv4_door.py) stands in front of the same API as API Gateway's IAM check: the
operation declared with `auth="sigv4"` is let through, the same one without auth is refused (a tool error
with the 403). Scopes come from the document's `security`; a tool may run as a task."""

from __future__ import annotations

import base64
import json
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from lambda_mcp import MCPApp
from lambda_mcp.protocol import shaping
from lambda_mcp.protocol.request_headers import client_headers
from lambda_mcp.testing import Client, RequestFailed
from tests.support.legacy_client import LegacyClient
from tests.support.petstore_api import PNG, REX, PetstoreAPI
from tests.support.polling import wait_until
from tests.support.processes import ROOT, ServerProcess, free_port, lambda_mcp_dev
from tests.support.recorder import Recorder
from tests.support.schema import errors_for
from tests.support.sigv4_door import SigV4Door

pytestmark = pytest.mark.anyio
MODERN = "2026-07-28"
ERAS = [MODERN, "2025-11-25"]
SPEC = ROOT / "tests/apps/openapi/petstore-3.1.json"
AWS = {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing", "AWS_SESSION_TOKEN": "testing"}
AWS |= {"AWS_REGION": "us-east-1", "AWS_DEFAULT_REGION": "us-east-1"}


@pytest.fixture(scope="module")
def api() -> Iterator[PetstoreAPI]:
    served = PetstoreAPI()
    yield served
    served.stop()


@pytest.fixture(scope="module")
def door(api: PetstoreAPI) -> Iterator[SigV4Door]:
    checked = SigV4Door(api.url)
    yield checked
    checked.stop()


@pytest.fixture(scope="module")
def app(api: PetstoreAPI, door: SigV4Door) -> MCPApp:
    """What tests/apps/openapi/petstore_app.py declares, in this process."""
    made = MCPApp("petstore", version="1.0.0")
    made.openapi(SPEC, base_url=api.base_url, exclude_tags=["admin"], task_support={"listPets": "optional"})
    signed, paths = f"{door.origin}/v1", ["/pets", "/pets/{petId}"]
    names = {name: f"signed_{name}" for name in ("listPets", "createPet", "showPetById")}
    made.openapi(SPEC, base_url=signed, auth="sigv4", names=names, paths=paths, methods=["get", "post"])
    unsigned = {"showPetById": "unsigned_showPetById"}
    made.openapi(SPEC, base_url=signed, names=unsigned, paths=["/pets/{petId}"], methods=["get"])
    return made


@pytest.fixture(params=ERAS)
async def client(request: pytest.FixtureRequest, app: MCPApp) -> AsyncIterator[Client]:
    async with Client(app, protocol_version=request.param) as connected:
        yield connected


# -- lambda_mcp.testing.Client ---------------------------------------------------------------------
async def test_tools_list_shows_each_operation_with_its_schemas(client: Client) -> None:
    tools = {t["name"]: t for t in await client.list_tools()}
    assert "resetStore" not in tools and {"listPets", "signed_showPetById", "unsigned_showPetById"} <= set(tools)
    for tool in tools.values():
        assert errors_for(tool, client.protocol_version, "Tool") == [], tool["name"]
    listing = tools["listPets"]
    assert listing["inputSchema"]["properties"]["tags"] == {"type": "array", "items": {"type": "string"}}
    assert listing["outputSchema"]["required"] == ["result"]
    create = tools["createPet"]["inputSchema"]
    assert create["required"] == ["name"] and create["properties"]["category"] == {"$ref": "#/$defs/Category"}
    assert tools["showPetById"] == shaping.tool(client.app.tools["showPetById"].definition, client.protocol_version)


async def test_path_query_header_cookie_and_body_arguments_reach_the_api(client: Client, api: PetstoreAPI) -> None:
    listed = await client.call_tool("listPets", {"limit": 2, "tags": ["a", "b"], "X-Request-Id": "r-7", "session": "s"})
    assert listed.structured_content == {"result": [REX]} and not listed.is_error
    seen = api.last()
    assert (seen.method, seen.path, seen.query) == ("GET", "/pets", [("limit", "2"), ("tags", "a"), ("tags", "b")])
    assert seen.headers["x-request-id"] == "r-7" and seen.headers["cookie"] == "session=s"
    created = await client.call_tool("createPet", {"name": "Tom", "status": "sold", "category": {"name": "cats"}})
    assert created.structured_content == {"id": 7, "name": "Tom", "status": "sold", "category": {"name": "cats"}}
    seen = api.last()
    assert (seen.method, seen.path, seen.headers["content-type"]) == ("POST", "/pets", "application/json")
    assert seen.json() == {"name": "Tom", "status": "sold", "category": {"name": "cats"}}
    deleted = await client.call_tool("deletePet", {"petId": "a b/c", "X-Reason": "adopted"})
    assert deleted.text == "DELETE /pets/{petId}: HTTP 204, no content" and not deleted.is_error
    seen = api.last()
    assert (seen.method, seen.raw_path, seen.headers["x-reason"]) == ("DELETE", "/v1/pets/a%20b%2Fc", "adopted")
    store = await client.call_tool("getStore", {"id": 4, "query_id": "i-1", "header_id": "h-1"})
    assert store.structured_content == {"store": "4"}
    seen = api.last()
    assert (seen.path, seen.query, seen.headers["id"]) == ("/stores/4", [("id", "i-1")], "h-1")
    noted = await client.call_tool("addNote", {"petId": "1", "text": "a good dog", "tags": ["x", "y"]})
    assert noted.text == "noted" and api.last().body == b"text=a+good+dog&tags=x&tags=y"


async def test_images_text_and_redirects(client: Client) -> None:
    photo = await client.call_tool("getPetPhoto", {"petId": "1"})
    assert photo.content == [{"type": "image", "data": base64.b64encode(PNG).decode(), "mimeType": "image/png"}]
    assert (await client.call_tool("get_health")).text == "ok"
    moved = await client.call_tool("oldPets")
    assert (
        moved.is_error
        and moved.text == "GET /old-pets answered HTTP 302 (a redirect to /v1/pets); redirects are not followed"
    )


async def test_a_404_and_a_500_are_tool_errors_with_the_status_and_an_excerpt(client: Client) -> None:
    missing = await client.call_tool("showPetById", {"petId": "9"})
    assert (
        missing.is_error
        and missing.text == 'GET /pets/{petId} answered HTTP 404 Not Found: {"code": 404, "message": "no pet 9"}'
    )
    broken = await client.call_tool("boom")
    assert broken.is_error and broken.text.startswith(
        "GET /boom answered HTTP 500 Internal Server Error: Internal trouble."
    )
    assert len(broken.text) < 2100 and broken.text.endswith("…")
    unnamed = await client.call_tool("showPetById", {})
    assert unnamed.is_error and unnamed.text == "missing required argument: petId"


@pytest.mark.parametrize("era", ERAS)
async def test_an_unreachable_api_is_a_tool_error_naming_its_host(era: str) -> None:
    port = free_port()
    app = MCPApp("gone")
    app.openapi(SPEC, base_url=f"http://127.0.0.1:{port}/v1", paths=["/health"])
    async with Client(app, protocol_version=era) as client:
        failed = await client.call_tool("get_health")
    assert failed.is_error and failed.text.startswith(f"could not reach 127.0.0.1:{port} for GET /health: ConnectError")


async def test_sigv4_calls_pass_the_door_and_unsigned_ones_are_refused_with_403(
    client: Client, api: PetstoreAPI, door: SigV4Door
) -> None:
    accepted, refused = door.accepted, len(door.refused)
    signed = await client.call_tool("signed_showPetById", {"petId": "1"})
    assert not signed.is_error and signed.structured_content == REX
    assert door.accepted == accepted + 1 and api.last().headers["authorization"].startswith("AWS4-HMAC-SHA256 ")
    listed = await client.call_tool("signed_listPets", {"limit": 2, "tags": ["a b", "c/d", "é"], "X-Request-Id": "r"})
    assert listed.structured_content == {"result": [REX]} and door.accepted == accepted + 2
    assert api.last().query == [("limit", "2"), ("tags", "a b"), ("tags", "c/d"), ("tags", "é")]
    created = await client.call_tool("signed_createPet", {"name": "Tôm", "category": {"name": "cats & dogs"}})
    assert created.structured_content == {"id": 7, "name": "Tôm", "category": {"name": "cats & dogs"}}
    assert door.accepted == accepted + 3 and api.last().json()["name"] == "Tôm"
    unsigned = await client.call_tool("unsigned_showPetById", {"petId": "1"})
    assert unsigned.is_error and unsigned.text.startswith("GET /pets/{petId} answered HTTP 403 Forbidden: ")
    assert door.refused[refused:] == ["no SigV4 Authorization header"]


@pytest.mark.parametrize("era", ERAS)
async def test_a_task_capable_operation_runs_as_a_task(app: MCPApp, api: PetstoreAPI, era: str) -> None:
    async with Client(app, protocol_version=era) as client:
        task = await client.start_task("listPets", {"limit": 1})  # fails when the server answers without a task
        result = await client.task_result(task["taskId"])
    assert result.structured_content == {"result": [REX]} and api.last().query == [("limit", "1")]


@pytest.mark.parametrize("era", ERAS)
async def test_the_documents_scopes_are_enforced(app: MCPApp, era: str) -> None:
    async with Client(app, protocol_version=era, scopes=["pets:read"]) as reader:
        names = {t["name"] for t in await reader.list_tools()}
        assert "listPets" in names and "createPet" not in names and "get_health" in names
        assert not (await reader.call_tool("showPetById", {"petId": "1"})).is_error
        with pytest.raises(RequestFailed) as refused:
            await reader.call_tool("createPet", {"name": "Tom"})
        assert refused.value.status == 403 and "tools/call needs scopes pets:write" in refused.value.message
    async with Client(app, protocol_version=era, scopes=["other"]) as stranger:
        assert {t["name"] for t in await stranger.list_tools()} == {"get_health", "boom", "slow"}
    async with Client(app, protocol_version=era, scopes=["pets:write"]) as writer:
        assert not (await writer.call_tool("createPet", {"name": "Tom"})).is_error


# -- lambda-mcp dev --lambda -----------------------------------------------------------------------
@pytest.fixture(scope="module")
def server(
    api: PetstoreAPI, door: SigV4Door, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[ServerProcess, int]]:
    """The dev process, and the port its `unreachable_health` tool calls (where nothing listens)."""
    log: Path = tmp_path_factory.mktemp("openapi-dev") / "dev.log"
    gone = free_port()
    env = {"PETSTORE_API_URL": api.base_url, "PETSTORE_SIGNED_URL": f"{door.origin}/v1", **AWS}
    env["PETSTORE_UNREACHABLE_URL"] = f"http://127.0.0.1:{gone}/v1"
    process = lambda_mcp_dev("tests/apps/openapi/petstore_app.py", through_lambda=True, log=log, env=env)
    yield process, gone
    process.stop()


def _modern(url: str, recorder: Recorder, method: str, params: dict[str, Any]) -> dict[str, Any]:
    """One schema-checked 2026 request (a client declaring the tasks extension); its result."""
    capabilities = {"extensions": {"io.modelcontextprotocol/tasks": {}}}
    meta = {
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientCapabilities": capabilities,
    }
    headers = {"content-type": "application/json", "accept": "application/json, text/event-stream"}
    headers |= {"mcp-protocol-version": MODERN, **client_headers(method, params, None)}
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": {**params, "_meta": meta}}).encode()
    reply = httpx.post(url, content=body, headers=headers, timeout=30)
    response = {k.lower(): v for k, v in reply.headers.items()}
    (answer,) = recorder.exchange(
        headers | {"host": reply.request.headers["host"]}, body, reply.status_code, response, reply.content
    )
    assert reply.status_code == 200 and "result" in answer, reply.text
    result: dict[str, Any] = answer["result"]
    return result


def _text(result: dict[str, Any]) -> str:
    return "\n".join(block["text"] for block in result["content"] if block["type"] == "text")


def _served(call: Callable[[str, dict[str, Any]], dict[str, Any]], api: PetstoreAPI, gone: int) -> None:
    """The checks both eras make of `lambda-mcp dev --lambda`, `call(name, arguments)` being one tools/call."""
    found = call("getStore", {"id": 2, "query_id": "q", "X-Trace": "t"})
    assert found["structuredContent"] == {"store": "2"} and not found.get("isError")
    seen = api.last()
    assert (seen.path, seen.query, seen.headers["x-trace"]) == ("/stores/2", [("id", "q")], "t")
    created = call("createPet", {"name": "Tom"})
    assert created["structuredContent"] == {"id": 7, "name": "Tom"} and api.last().json() == {"name": "Tom"}
    missing = call("showPetById", {"petId": "9"})
    assert missing["isError"] is True and "HTTP 404 Not Found" in _text(missing) and "no pet 9" in _text(missing)
    broken = call("boom", {})
    assert broken["isError"] is True and "HTTP 500 Internal Server Error" in _text(broken)
    unreachable = call("unreachable_health", {})
    assert unreachable["isError"] is True and _text(unreachable).startswith(f"could not reach 127.0.0.1:{gone} for")
    assert call("signed_showPetById", {"petId": "1"})["structuredContent"] == REX
    assert call("signed_createPet", {"name": "Rex II", "tag": "a & b"})["structuredContent"]["id"] == 7
    assert api.last().headers["authorization"].startswith("AWS4-HMAC-SHA256 ")
    refused = call("unsigned_showPetById", {"petId": "1"})
    assert refused["isError"] is True and "HTTP 403 Forbidden" in _text(refused)


def test_lambda_mcp_dev_lambda_serves_the_operations_on_2026(
    server: tuple[ServerProcess, int], api: PetstoreAPI, recorder: Recorder
) -> None:
    process, gone = server

    def call(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        return _modern(process.url, recorder, "tools/call", {"name": name, "arguments": arguments})

    tools = {t["name"]: t for t in _modern(process.url, recorder, "tools/list", {})["tools"]}
    assert "resetStore" not in tools and tools["listPets"]["outputSchema"]["required"] == ["result"]
    assert tools["createPet"]["inputSchema"]["required"] == ["name"]
    _served(call, api, gone)
    # a task-capable operation runs as a task: through the local queue and the real worker handler
    task = call("listPets", {"limit": 3})
    assert task["resultType"] == "task"

    def finished() -> dict[str, Any] | None:
        state = _modern(process.url, recorder, "tasks/get", {"taskId": task["taskId"]})
        return state if state["status"] == "completed" else None

    done: dict[str, Any] = wait_until(finished, what="the listPets task to complete")
    assert done["result"]["structuredContent"] == {"result": [REX]}
    assert ("limit", "3") in api.last().query


def test_lambda_mcp_dev_lambda_serves_the_operations_on_2025_11_25(
    server: tuple[ServerProcess, int], api: PetstoreAPI, recorder: Recorder
) -> None:
    process, gone = server
    client = LegacyClient(process.url, recorder)

    def call(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        result: dict[str, Any] = client.call("tools/call", {"name": name, "arguments": arguments})["result"]
        return result

    tools = {t["name"]: t for t in client.call("tools/list")["result"]["tools"]}
    assert tools["getStore"]["inputSchema"]["properties"].keys() == {"id", "query_id", "header_id", "X-Trace"}
    assert tools["listPets"]["execution"] == {"taskSupport": "optional"}
    _served(call, api, gone)
