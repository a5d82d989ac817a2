"""The options of `app.openapi`: filters by tag, path pattern and method; tool names (`operationId`, made from
method and path, `names=`); scopes (from the document's `security`, or `scopes=`); `task_support=`; and the
one-line refusals of options that do not fit the document."""

from __future__ import annotations

from typing import Any

import pytest

from lambda_mcp import MCPApp
from lambda_mcp.protocol.names import is_tool_name as is_valid
from lambda_mcp.server.errors import DeclarationError
from lambda_mcp.server.openapi.build import Report, openapi_tools
from lambda_mcp.server.openapi.document import SpecError
from lambda_mcp.server.openapi.naming import made_name, unique, valid_name
from tests.support.processes import ROOT

PETSTORE = ROOT / "tests/apps/openapi/petstore-3.1.json"
INVENTORY = ROOT / "tests/apps/openapi/inventory-3.0.yaml"
ALL = [
    "listPets", "createPet", "searchPets", "showPetById", "updatePet", "deletePet", "getPetPhoto", "addNote",
    "setPetTags", "movePet", "getStore", "getTree", "get_health", "boom", "slow", "oldPets", "resetStore",
]  # fmt: skip


def _names(**options: Any) -> list[str]:
    return [t.name for t in openapi_tools(PETSTORE, **options).tools]


def _refused(spec: Any = PETSTORE, **options: Any) -> str:
    with pytest.raises(SpecError) as refused:
        openapi_tools(spec, **options)
    return refused.value.problem


def test_without_filters_every_servable_operation_is_a_tool_in_document_order() -> None:
    assert _names() == ALL


def test_tags_and_exclude_tags() -> None:
    assert _names(tags=["ops"]) == ["get_health", "boom", "slow"]
    assert _names(tags=["ops", "trees"]) == ["getTree", "get_health", "boom", "slow"]
    assert _names(exclude_tags=["pets", "admin"]) == ["getStore", "getTree", "get_health", "boom", "slow"]
    report = openapi_tools(PETSTORE, tags=["trees"], exclude_tags=["trees"])
    assert report.tools == [] and all(s.filtered for s in report.skipped)


def test_paths_are_shell_patterns_and_methods_any_case() -> None:
    assert _names(paths=["/pets/{petId}"]) == ["showPetById", "updatePet", "deletePet"]
    assert _names(paths=["/pets/*"], methods=["put"]) == ["updatePet", "setPetTags"]  # `*` crosses `/`
    assert _names(paths=["/pets/{petId}/*"], exclude_paths=["*/photo", "*/notes"]) == ["setPetTags", "movePet"]
    assert _names(methods=["DELETE", "Post"]) == ["createPet", "deletePet", "addNote", "movePet", "resetStore"]


def test_what_the_filters_leave_out_is_reported_as_filtered_with_the_reason() -> None:
    report = openapi_tools(PETSTORE, tags=["ops"], exclude_paths=["/slow"])
    reasons = {s.operation: s.reason for s in report.skipped if s.filtered}
    assert reasons["GET /pets"] == "it has none of tags=['ops']"
    assert reasons["GET /slow"] == "its path matches exclude_paths '/slow'"
    assert [s for s in report.skipped if not s.filtered] == []  # filtered first: /upload and /external are not ops
    assert "its method is not one of methods=['GET']" in {
        s.reason for s in openapi_tools(PETSTORE, methods=["get"]).skipped
    }
    assert _refused(methods=["fetch"]) == "methods: 'fetch' is not an HTTP method"


def test_names_map_an_operation_id_or_a_made_name() -> None:
    names = _names(names={"listPets": "pets_list", "get_health": "health"}, tags=["ops", "pets"], methods=["get"])
    assert names[:2] == ["pets_list", "searchPets"] and "health" in names and "get_health" not in names


def test_made_names_and_invalid_operation_ids_become_valid_tool_names() -> None:
    assert made_name("GET", "/pets/{petId}/photo") == "get_pets_petId_photo"
    assert made_name("get", "/") == "get" and made_name("post", "/v1/a b:c") == "post_v1_a_b_c"
    assert valid_name("list pets: all!") == "list_pets_all" and valid_name("???") == "operation"
    assert len(valid_name("x" * 300)) == 128 and is_valid(valid_name("é" * 3 + "a"))
    assert is_valid("a.b-c_D9") and not is_valid("") and not is_valid("a b") and not is_valid("x" * 129)
    assert unique("body", {"body", "body_2"}) == "body_3"
    paths = {
        "/a b": {"get": {"operationId": "list pets", "responses": {}}},
        "/a_b": {"get": {"responses": {}}},
        "/a-b": {"get": {"operationId": "get_a_b", "responses": {}}},
    }
    doc = {"openapi": "3.1.0", "info": {"title": "t", "version": "1"}, "paths": paths}
    report = openapi_tools(doc, base_url="https://a.example.com")
    assert [t.name for t in report.tools] == ["list_pets", "get_a_b"]
    assert [(s.operation, s.reason) for s in report.skipped] == [
        ("GET /a-b", "its tool name 'get_a_b' is already GET /a_b's: give one another with names=")
    ]
    renamed = openapi_tools(doc, base_url="https://a.example.com", names={"list pets": "everything"})
    assert [t.name for t in renamed.tools] == ["everything", "get_a_b"]


def test_names_that_are_invalid_or_name_no_operation_are_refused() -> None:
    assert _refused(names={"listPets": "list pets"}) == (
        "names: 'list pets' is not a valid tool name (1-128 of A-Z a-z 0-9 _ . -)"
    )
    assert _refused(names={"lisPets": "x"}) == "names: 'lisPets' is no operationId (or made name) of the document"
    # an operation the filters leave out may still be named
    assert _names(names={"listPets": "x"}, tags=["ops"]) == ["get_health", "boom", "slow"]


def test_scopes_come_from_the_first_security_requirement_of_the_operation_else_the_document() -> None:
    tools = {t.name: t for t in openapi_tools(PETSTORE).tools}
    assert tools["listPets"].scopes == {"pets:read"}  # the document's
    assert tools["createPet"].scopes == {"pets:write"}  # its own
    assert tools["deletePet"].scopes == {"pets:write"}  # the first of two alternatives
    assert tools["get_health"].scopes == frozenset()  # security: []
    inventory = {t.name: t for t in openapi_tools(INVENTORY).tools}
    assert inventory["listItems"].scopes == frozenset()  # an API key has no scopes
    assert inventory["deleteItem"].scopes == {"inventory:admin", "inventory:write"}  # openIdConnect


def test_scopes_given_per_tool_name_replace_the_documents() -> None:
    report: Report = openapi_tools(PETSTORE, names={"listPets": "pets"}, scopes={"pets": ["a", "b"], "get_health": []})
    tools = {t.name: t for t in report.tools}
    assert tools["pets"].scopes == {"a", "b"} and tools["get_health"].scopes == frozenset()
    assert tools["createPet"].scopes == {"pets:write"}
    assert _refused(scopes={"listPets": ["x"]}, names={"listPets": "pets"}) == (
        "scopes: 'listPets' is no tool name of the document"
    )


def test_task_support_values_and_names_are_checked() -> None:
    assert _refused(task_support="sometimes") == "task_support='sometimes': one of forbidden, optional, required"
    assert _refused(task_support={"nope": "optional"}) == "task_support: 'nope' is no tool name of the document"


def test_fixed_headers_must_be_one_line_of_ascii() -> None:
    for bad in ({"X-Client": "a\r\nX-Admin: 1"}, {"X-Client": "café"}, {"X-Client": 3}):
        assert _refused(headers=bad) == "headers: 'X-Client' must be a string: one line of ASCII text"


def test_app_openapi_registers_the_tools_beside_declared_ones_and_refuses_a_name_twice() -> None:
    app = MCPApp("t")

    @app.tool()
    def listPets() -> str:  # noqa: N802 - the operation's name on purpose
        return "mine"

    with pytest.raises(DeclarationError, match="a tool named 'listPets' is already declared"):
        app.openapi(PETSTORE, tags=["pets"])
    report = app.openapi(PETSTORE, tags=["ops"], scopes={"boom": ["ops:boom"]})
    assert [t.name for t in report.tools] == ["get_health", "boom", "slow"]
    assert app.tools["boom"].scopes == {"ops:boom"} and app.tools["get_health"] is report.tools[0]
    assert report.operations == {"get_health": "GET /health", "boom": "GET /boom", "slow": "GET /slow"}
