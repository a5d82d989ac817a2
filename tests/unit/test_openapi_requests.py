"""A call's arguments as its HTTP request (path, query, header, cookie, JSON and form bodies; the styles), and
an HTTP response as the tool's result (JSON, text, images, blobs, no content, redirects, errors)."""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest

from lambda_mcp.server.errors import ToolError
from lambda_mcp.server.openapi.build import openapi_tools
from lambda_mcp.server.openapi.calls import Call
from lambda_mcp.server.openapi.outgoing import Request, authority, request
from lambda_mcp.server.openapi.outputs import EXCERPT_CHARS, Answer, Received, result
from tests.support.processes import ROOT

PETSTORE = ROOT / "tests/apps/openapi/petstore-3.1.json"
BASE = "https://api.example.com/v1"
CALLS: dict[str, Call] = {
    t.name: t.forward for t in openapi_tools(PETSTORE, base_url=BASE).tools if isinstance(t.forward, Call)
}


def _request(name: str, arguments: dict[str, Any], fixed: dict[str, str] | None = None) -> Request:
    call = CALLS[name]
    return request(call.plan, call.base_url, call.path, arguments, fixed or {}, call.answer.accept)


def _style(style: str, explode: bool, location: str, value: Any) -> Request:
    parameter = {"name": "v", "in": location, "style": style, "explode": explode, "required": True, "schema": {}}
    path = "/x/{v}" if location == "path" else "/x"
    doc = {
        "openapi": "3.1.0",
        "info": {"title": "t", "version": "1"},
        "paths": {path: {"get": {"operationId": "x", "parameters": [parameter], "responses": {}}}},
    }
    (tool,) = openapi_tools(doc, base_url=BASE).tools
    assert isinstance(tool.forward, Call)
    return request(tool.forward.plan, BASE, path, {"v": value}, {}, None)


def test_path_query_header_and_cookie_parameters_go_where_they_were_declared() -> None:
    sent = _request("listPets", {"limit": 5, "tags": ["a", "b c"], "X-Request-Id": "r-1", "session": "s 1"})
    assert sent.url == f"{BASE}/pets?limit=5&tags=a&tags=b%20c"
    assert sent.headers == {"X-Request-Id": "r-1", "Cookie": "session=s%201", "Accept": "application/json, */*;q=0.1"}
    assert sent.body == b""
    store = _request("getStore", {"id": 3, "query_id": "q/1", "header_id": "h", "X-Trace": "t"})
    assert store.url == f"{BASE}/stores/3?id=q%2F1" and store.headers["id"] == "h" and store.headers["X-Trace"] == "t"


def test_path_values_are_percent_encoded_and_cannot_climb_out_of_the_path() -> None:
    assert _request("showPetById", {"petId": "a/b?c#d é"}).url == f"{BASE}/pets/a%2Fb%3Fc%23d%20%C3%A9"
    for bad in ("..", ".", ""):
        with pytest.raises(ToolError, match="the path parameter petId cannot be"):
            _request("showPetById", {"petId": bad})


def test_missing_required_arguments_are_named_and_null_is_not_given() -> None:
    with pytest.raises(ToolError) as missing:
        _request("deletePet", {"petId": None})
    assert str(missing.value) == "missing required arguments: petId, X-Reason"
    with pytest.raises(ToolError, match="^missing required argument: name$"):
        _request("createPet", {"tag": "x"})
    assert _request("listPets", {"limit": None}).url == f"{BASE}/pets"


def test_query_styles() -> None:
    sent = _request("searchPets", {"filter": {"status": "sold", "tag": "x"}, "ids": [1, 2], "where": {"a": [1]}})
    assert (
        sent.url
        == f"{BASE}/pets/search?filter%5Bstatus%5D=sold&filter%5Btag%5D=x&ids=1%7C2&where=%7B%22a%22%3A%5B1%5D%7D"
    )
    assert _style("form", False, "query", [1, True]).url == f"{BASE}/x?v=1%2Ctrue"
    assert _style("form", True, "query", {"a": 1, "b": "x"}).url == f"{BASE}/x?a=1&b=x"
    assert _style("form", False, "query", {"a": 1}).url == f"{BASE}/x?v=a%2C1"
    assert _style("spaceDelimited", False, "query", ["a", "b"]).url == f"{BASE}/x?v=a%20b"


def test_path_styles() -> None:
    assert _style("simple", False, "path", [1, 2]).url == f"{BASE}/x/1,2"
    assert _style("simple", True, "path", {"a": 1, "b": 2}).url == f"{BASE}/x/a=1,b=2"
    assert _style("label", False, "path", [1, 2]).url == f"{BASE}/x/.1,2"
    assert _style("label", True, "path", [1, 2]).url == f"{BASE}/x/.1.2"
    assert _style("matrix", False, "path", [1, 2]).url == f"{BASE}/x/;v=1,2"
    assert _style("matrix", True, "path", [1, 2]).url == f"{BASE}/x/;v=1;v=2"
    assert _style("matrix", True, "path", {"a": 1}).url == f"{BASE}/x/;a=1"


def test_header_values_cannot_carry_line_breaks_or_other_than_ascii() -> None:
    with pytest.raises(ToolError, match="the header argument X-Reason cannot hold a line break"):
        _request("deletePet", {"petId": "1", "X-Reason": "a\r\nX-Admin: yes"})
    with pytest.raises(ToolError, match="the header argument X-Reason must be ASCII text"):
        _request("deletePet", {"petId": "1", "X-Reason": "adoptée"})
    assert _style("simple", False, "header", [1, 2]).headers == {"v": "1,2"}


def test_a_flattened_body_collects_its_fields_and_a_whole_body_is_sent_as_given() -> None:
    sent = _request("createPet", {"name": "Tom", "category": {"name": "cats"}, "tag": None, "color": "red"})
    assert json.loads(sent.body) == {"name": "Tom", "category": {"name": "cats"}, "color": "red"}  # extras go too
    assert sent.headers["Content-Type"] == "application/json"
    moved = _request("movePet", {"petId": "1", "store": "s", "body": {"store": "t", "shelf": None}})
    assert moved.url == f"{BASE}/pets/1/move?store=s" and json.loads(moved.body) == {"store": "t", "shelf": None}
    assert json.loads(_request("setPetTags", {"petId": "1", "body": ["a", "b"]}).body) == ["a", "b"]


def test_a_form_body_is_url_encoded() -> None:
    sent = _request("addNote", {"petId": "1", "text": "hi there & more", "tags": ["x", "y"]})
    assert sent.body == b"text=hi+there+%26+more&tags=x&tags=y"
    assert sent.headers["Content-Type"] == "application/x-www-form-urlencoded"


def test_fixed_headers_win_over_header_parameters_and_set_accept() -> None:
    sent = _request("getStore", {"id": 1, "X-Trace": "from-model"}, {"x-trace": "fixed", "Accept": "text/csv"})
    assert sent.headers == {"x-trace": "fixed", "Accept": "text/csv"}


# -- answers ---------------------------------------------------------------------------------------
PET = Answer({"type": "object", "properties": {}}, wrapped=False)
PETS = Answer({"type": "object", "properties": {"result": {}}}, wrapped=True)
NONE = Answer(None)
URL = f"{BASE}/pets/1?secret=x"


def _result(answer: Answer, status: int, body: bytes, kind: str = "application/json", **more: Any) -> dict[str, Any]:
    return result(answer, "GET /pets/{petId}", URL, Received(status, "Reason", kind, body, **more))


def test_json_with_an_output_schema_is_structured_content_and_its_text() -> None:
    assert _result(PET, 200, b'{"id": 1}') == {
        "content": [{"type": "text", "text": '{"id": 1}'}],
        "structuredContent": {"id": 1},
    }
    wrapped = _result(PETS, 200, b"[1, 2]")
    assert wrapped["structuredContent"] == {"result": [1, 2]} and json.loads(wrapped["content"][0]["text"]) == {
        "result": [1, 2]
    }
    assert _result(NONE, 200, b'{"id": 1}') == {"content": [{"type": "text", "text": '{"id": 1}'}]}


def test_an_answer_that_breaks_its_declared_schema_is_a_tool_error() -> None:
    assert _result(PET, 200, b"[1]")["isError"] is True
    assert "is not JSON" in _result(PET, 200, b"<html>", "text/html")["content"][0]["text"]
    assert "no content, where its document declares JSON" in _result(PET, 204, b"")["content"][0]["text"]


def test_text_images_blobs_and_no_content() -> None:
    assert _result(NONE, 200, "olá".encode("latin-1"), "text/plain; charset=latin-1")["content"] == [
        {"type": "text", "text": "olá"}
    ]
    png = b"\x89PNG...."
    image = {"type": "image", "data": base64.b64encode(png).decode(), "mimeType": "image/png"}
    assert _result(NONE, 200, png, "image/png")["content"] == [image]
    (blob,) = _result(NONE, 200, b"%PDF", "application/pdf")["content"]
    resource = {"uri": f"{BASE}/pets/1", "mimeType": "application/pdf", "blob": base64.b64encode(b"%PDF").decode()}
    assert blob == {"type": "resource", "resource": resource}  # the query (where a key might be) left out
    assert _result(NONE, 204, b"")["content"] == [{"type": "text", "text": "GET /pets/{petId}: HTTP 204, no content"}]


def test_errors_and_redirects_are_tool_errors_with_a_bounded_excerpt() -> None:
    missing = _result(PET, 404, b'{"message": "no pet 9"}')
    assert missing == {
        "content": [{"type": "text", "text": 'GET /pets/{petId} answered HTTP 404 Reason: {"message": "no pet 9"}'}],
        "isError": True,
    }
    long = _result(NONE, 500, b"x" * 10_000, "text/plain")["content"][0]["text"]
    assert long.startswith("GET /pets/{petId} answered HTTP 500 Reason: xxx") and long.endswith("…")
    assert len(long.split(": ", 1)[1]) == EXCERPT_CHARS
    assert _result(NONE, 502, b"\x00\x01", "application/octet-stream")["content"][0]["text"].endswith(
        ": (2 bytes of application/octet-stream)"
    )
    moved = _result(NONE, 301, b"", location="https://elsewhere.example.com/pets/1")
    assert moved["isError"] and moved["content"][0]["text"] == (
        "GET /pets/{petId} answered HTTP 301 (a redirect to https://elsewhere.example.com/pets/1);"
        " redirects are not followed"
    )


def test_messages_and_resource_uris_never_carry_user_info() -> None:
    assert authority("http://user:secret@[::1]:8080/v1") == "[::1]:8080"
    assert authority("https://user:secret@api.example.com/v1") == "api.example.com"
    received = Received(200, "OK", "application/zip", b"PK")
    (blob,) = result(NONE, "GET /f", "https://user:secret@api.example.com/v1/f?k=1", received)["content"]
    assert blob["resource"]["uri"] == "https://api.example.com/v1/f"
