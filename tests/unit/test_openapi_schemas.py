"""What `app.openapi` makes of each operation: definitions valid for MCP on both eras, input schemas from the
parameters and body (the argument mapping), output schemas from the 2xx responses, `$ref`s resolved with
recursion kept as `$defs`, and the OpenAPI 3.0 dialect turned into JSON Schema."""

from __future__ import annotations

import json
from typing import Any

import jsonschema
import pytest

from lambda_mcp.protocol import shaping
from lambda_mcp.server.openapi.build import Report, openapi_tools
from lambda_mcp.server.tools import Tool
from tests.support.processes import ROOT
from tests.support.schema import errors_for

PETSTORE = ROOT / "tests/apps/openapi/petstore-3.1.json"
INVENTORY = ROOT / "tests/apps/openapi/inventory-3.0.yaml"
ERAS = ["2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26"]


def _tools(spec: Any, **options: Any) -> dict[str, Tool]:
    return {t.name: t for t in openapi_tools(spec, base_url="https://api.example.com", **options).tools}


def _definition(spec: Any, name: str) -> dict[str, Any]:
    definition: dict[str, Any] = _tools(spec)[name].definition
    return definition


def _doc(paths: dict[str, Any], schemas: dict[str, Any] | None = None, version: str = "3.1.0") -> dict[str, Any]:
    return {
        "openapi": version,
        "info": {"title": "t", "version": "1"},
        "paths": paths,
        "components": {"schemas": schemas or {}},
    }


def _get(responses: dict[str, Any] | None = None, **operation: Any) -> dict[str, Any]:
    return {"get": {"responses": responses or {"200": {"description": "ok"}}, **operation}}


def _valid(schema: dict[str, Any], value: Any) -> bool:
    return jsonschema.Draft202012Validator(schema).is_valid(value)


@pytest.mark.parametrize("spec", [PETSTORE, INVENTORY], ids=["3.1", "3.0"])
@pytest.mark.parametrize("era", ERAS)
def test_every_definition_is_a_valid_mcp_tool_with_valid_json_schemas(spec: Any, era: str) -> None:
    report: Report = openapi_tools(spec, task_support="optional")
    assert report.tools
    for tool in report.tools:
        assert json.loads(json.dumps(tool.definition)) == tool.definition  # plain JSON, kept as it is served
        definition = shaping.tool(tool.definition, era)  # as the kit serves it on that revision
        assert errors_for(definition, era, "Tool") == [], tool.name
        assert definition["inputSchema"]["type"] == "object"
        jsonschema.Draft202012Validator.check_schema(definition["inputSchema"])
        if "outputSchema" in definition:
            assert definition["outputSchema"]["type"] == "object"
            jsonschema.Draft202012Validator.check_schema(definition["outputSchema"])


def test_a_recursive_schema_is_kept_once_under_defs_and_still_validates() -> None:
    create = _definition(PETSTORE, "createPet")
    schema = create["inputSchema"]
    assert schema["properties"]["category"] == {"$ref": "#/$defs/Category"}
    assert schema["$defs"]["Category"]["properties"]["parent"] == {"$ref": "#/$defs/Category"}
    nested = {"name": "Tom", "category": {"name": "cats", "parent": {"name": "animals", "parent": {"name": "all"}}}}
    assert _valid(schema, nested)
    assert not _valid(schema, {"name": "Tom", "category": {"parent": {"name": 5}}})
    tree = _definition(PETSTORE, "getTree")["outputSchema"]
    assert tree["properties"]["children"]["items"] == {"$ref": "#/$defs/Node"}  # the root inlined once
    assert _valid(tree, {"value": "root", "children": [{"value": "leaf", "children": []}]})
    assert not _valid(tree, {"value": "root", "children": [{"children": []}]})


def test_mutual_recursion_and_a_ref_chain_resolve() -> None:
    schemas = {
        "A": {"type": "object", "properties": {"b": {"$ref": "#/components/schemas/B"}}},
        "B": {
            "type": "object",
            "properties": {"a": {"$ref": "#/components/schemas/A"}, "n": {"$ref": "#/components/schemas/N"}},
        },
        "N": {"$ref": "#/components/schemas/M"},
        "M": {"type": "integer"},
    }
    ok = {"200": {"description": "ok", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/A"}}}}}
    output = _definition(_doc({"/a": _get(ok, operationId="a")}, schemas), "a")["outputSchema"]
    jsonschema.Draft202012Validator.check_schema(output)
    assert _valid(output, {"b": {"n": 1, "a": {"b": {"n": 2}}}})
    assert not _valid(output, {"b": {"a": {"b": {"n": "two"}}}})


def test_openapi_3_0_schemas_become_json_schema() -> None:
    listing = _definition(INVENTORY, "listItems")
    item = listing["outputSchema"]["properties"]["result"]["items"]
    props = item["properties"]
    assert props["description"]["type"] == ["string", "null"]
    assert props["kind"] == {"type": ["string", "null"], "enum": ["tool", "part", None]}
    assert props["price"] == {"type": "number", "exclusiveMinimum": 0, "maximum": 1000}
    assert props["name"] == {"type": "string", "examples": ["hammer"]}
    assert props["owner"]["anyOf"][1] == {"type": "null"}
    assert props["supplier"] == {"type": "object", "properties": {"name": {"type": "string"}}}  # 3.0: siblings ignored
    assert not {"discriminator", "xml", "externalDocs", "x-internal", "nullable", "example"} & set(item)
    assert "password" not in props and item["required"] == ["id", "name"]  # writeOnly: never in an answer
    assert _valid(listing["outputSchema"], {"result": [{"id": 1, "name": "saw", "description": None, "owner": None}]})
    assert not _valid(listing["outputSchema"], {"result": [{"id": 1, "name": "saw", "price": 0}]})
    assert listing["inputSchema"]["properties"]["category"] == {"type": ["string", "null"]}
    create = _definition(INVENTORY, "createItem")["inputSchema"]
    assert "id" not in create["properties"] and "password" in create["properties"]  # readOnly: never sent


def test_a_3_1_refs_siblings_apply_too() -> None:
    schemas = {"Name": {"type": "string", "description": "a name"}}
    query = [
        {"name": "a", "in": "query", "schema": {"$ref": "#/components/schemas/Name", "description": "first"}},
        {"name": "b", "in": "query", "schema": {"$ref": "#/components/schemas/Name", "maxLength": 3}},
    ]
    props = _definition(_doc({"/x": _get(operationId="x", parameters=query)}, schemas), "x")["inputSchema"][
        "properties"
    ]
    assert props["a"] == {"type": "string", "description": "first"}
    assert props["b"] == {"maxLength": 3, "allOf": [{"type": "string", "description": "a name"}]}


def test_an_object_body_is_flattened_and_its_required_fields_are_required_when_the_body_is() -> None:
    create = _definition(PETSTORE, "createPet")["inputSchema"]
    assert list(create["properties"]) == ["name", "tag", "status", "category"] and create["required"] == ["name"]
    loose = _definition(INVENTORY, "createItem")["inputSchema"]  # requestBody.required is absent: false
    assert "required" not in loose and "name" in loose["properties"]


def test_a_body_that_collides_with_a_parameter_or_is_no_object_is_the_argument_body() -> None:
    move = _definition(PETSTORE, "movePet")["inputSchema"]
    assert list(move["properties"]) == ["petId", "store", "body"] and move["required"] == ["petId", "store", "body"]
    assert move["properties"]["body"]["properties"]["store"] == {"type": "string"}
    tags = _definition(PETSTORE, "setPetTags")["inputSchema"]["properties"]["body"]
    assert tags == {"type": "array", "items": {"type": "string"}, "description": "The pet's new tags"}
    form = _definition(PETSTORE, "addNote")["inputSchema"]
    assert form["required"] == ["petId", "text"] and "tags" in form["properties"]


def test_same_named_parameters_keep_their_name_in_the_earliest_location_and_else_are_prefixed() -> None:
    store = _definition(PETSTORE, "getStore")["inputSchema"]
    assert list(store["properties"]) == ["id", "query_id", "header_id", "X-Trace"]
    assert store["properties"]["id"] == {"type": "integer"} and store["required"] == ["id"]
    assert store["properties"]["query_id"]["description"] == "An item in the store"


def test_accept_content_type_and_authorization_header_parameters_are_ignored() -> None:
    delete = _definition(PETSTORE, "deletePet")["inputSchema"]
    assert list(delete["properties"]) == ["petId", "X-Reason"] and delete["required"] == ["petId", "X-Reason"]


def test_the_output_schema_is_the_2xx_json_schema_wrapped_when_it_is_no_object() -> None:
    tools = _tools(PETSTORE)
    assert tools["showPetById"].definition["outputSchema"]["required"] == ["id", "name"]
    listing = tools["listPets"].definition["outputSchema"]
    assert listing["required"] == ["result"] and listing["properties"]["result"]["type"] == "array"
    for name in ("get_health", "getPetPhoto", "deletePet", "boom"):  # text, an image, no content
        assert "outputSchema" not in tools[name].definition, name
    assert "outputSchema" not in _definition(INVENTORY, "getItem")  # 200 JSON or 204: no one schema


def test_descriptions_annotations_and_task_support() -> None:
    tools = _tools(PETSTORE, task_support={"listPets": "optional", "slow": "required"})
    assert tools["listPets"].definition["description"] == "List all pets\n\nPets in the store, newest first."
    assert tools["movePet"].definition["description"] == "POST /pets/{petId}/move"
    assert tools["oldPets"].definition["description"] == "Deprecated."
    assert tools["listPets"].definition["annotations"] == {"readOnlyHint": True, "openWorldHint": True}
    assert tools["deletePet"].definition["annotations"]["idempotentHint"] is True
    assert tools["createPet"].definition["annotations"]["readOnlyHint"] is False
    assert tools["listPets"].task_support == "optional" and tools["slow"].task_support == "required"
    assert "execution" not in tools["getTree"].definition and tools["getTree"].task_support == "forbidden"
    assert {t.task_support for t in _tools(PETSTORE, task_support="optional").values()} == {"optional"}


@pytest.mark.parametrize(
    ("operation", "reason"),
    [
        (
            _get(
                operationId="x",
                parameters=[{"name": "q", "in": "query", "schema": {"$ref": "#/components/schemas/Nope"}}],
            ),
            "its $ref '#/components/schemas/Nope' points to nothing in the document",
        ),
        (
            _get(operationId="x", parameters=[{"$ref": "common.yaml#/parameters/q"}]),
            "it uses the external $ref 'common.yaml#/parameters/q': bundle the document into one file first",
        ),
        (
            _get(operationId="x", parameters=[{"name": "q", "in": "query", "schema": {"$ref": "#Thing"}}]),
            "it uses the $ref '#Thing', which is not a JSON pointer",
        ),
        (
            _get(operationId="x", parameters=[{"name": "q", "in": "body"}]),
            "it declares a parameter without a name or a location (in: path, query, header, cookie)",
        ),
        (
            {
                "post": {
                    "operationId": "x",
                    "requestBody": {"content": {"application/octet-stream": {}}},
                    "responses": {},
                }
            },
            "its request body is application/octet-stream; only JSON and application/x-www-form-urlencoded are sent",
        ),
    ],
)
def test_an_operation_that_cannot_be_served_is_skipped_with_its_reason(operation: dict[str, Any], reason: str) -> None:
    report = openapi_tools(_doc({"/x": operation, "/ok": _get(operationId="ok")}), base_url="https://a.example.com")
    assert [t.name for t in report.tools] == ["ok"]
    assert [(s.operation, s.reason, s.filtered) for s in report.skipped] == [
        (f"{next(iter(operation)).upper()} /x", reason, False)
    ]


def test_a_path_variable_no_parameter_declares_and_an_external_path_item_are_skipped() -> None:
    paths = {"/pets/{petId}": _get(operationId="x"), "/remote": {"$ref": "other.yaml#/paths/~1remote"}}
    report = openapi_tools(_doc(paths), base_url="https://a.example.com")
    assert report.tools == []
    assert [(s.operation, s.reason) for s in report.skipped] == [
        ("GET /pets/{petId}", "its path names {petId}, which no path parameter declares"),
        ("/remote", "it uses the external $ref 'other.yaml#/paths/~1remote': bundle the document into one file first"),
    ]
