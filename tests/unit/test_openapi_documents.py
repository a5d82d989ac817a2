"""`app.openapi`'s documents: a file (JSON or YAML), a URL fetched once, or a dict; OpenAPI 3.0 or 3.1 only, each
other kind refused in one line; and the base URL its calls go to."""

from __future__ import annotations

import json
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

import pytest

from lambda_mcp import MCPApp
from lambda_mcp.server.errors import DeclarationError
from lambda_mcp.server.openapi.build import openapi_tools
from lambda_mcp.server.openapi.document import SpecError
from tests.support.loopback import LoopbackServer, respond
from tests.support.processes import ROOT

PETSTORE = ROOT / "tests/apps/openapi/petstore-3.1.json"
INVENTORY = ROOT / "tests/apps/openapi/inventory-3.0.yaml"


def _doc(**extra: Any) -> dict[str, Any]:
    ping = {"get": {"operationId": "ping", "responses": {"200": {"description": "pong"}}}}
    return {"openapi": "3.1.0", "info": {"title": "t", "version": "1"}, "paths": {"/ping": ping}, **extra}


def _refused(spec: Any, **options: Any) -> str:
    with pytest.raises(SpecError) as refused:
        openapi_tools(spec, **options)
    return refused.value.problem


@pytest.fixture(scope="module")
def served() -> Iterator[str]:
    """A loopback server of documents: `/petstore.json`, `/inventory` (YAML by its content type),
    `/relative.json` (a relative server URL), `/bare.json` (no servers), `/moved` (a redirect)."""
    relative = _doc(servers=[{"url": "/api/v3"}])

    def handle(handler: BaseHTTPRequestHandler) -> None:
        pages: dict[str, tuple[bytes, str]] = {
            "/petstore.json": (PETSTORE.read_bytes(), "application/json"),
            "/inventory": (INVENTORY.read_bytes(), "application/yaml"),
            "/docs/relative.json": (json.dumps(relative).encode(), "application/json"),
            "/bare.json": (json.dumps(_doc()).encode(), "application/json"),
        }
        if handler.path == "/moved":
            respond(handler, 301, b"", None, [("location", "https://elsewhere.example.com/spec.json")])
        elif handler.path in pages:
            respond(handler, 200, *pages[handler.path])
        else:
            respond(handler, 404, b"{}")

    server = LoopbackServer(handle)
    yield server.url
    server.stop()


def test_a_json_file_a_yaml_file_and_a_dict_are_read() -> None:
    assert len(openapi_tools(PETSTORE).tools) == 17
    inventory = openapi_tools(INVENTORY)
    assert [t.name for t in inventory.tools] == ["listItems", "createItem", "getItem", "deleteItem"]
    assert openapi_tools(json.loads(PETSTORE.read_text()), base_url="https://x.example.com").tools[0].name == "listPets"
    assert openapi_tools(str(PETSTORE)).base_url == "https://petstore.example.com/v1"


def test_yaml_dates_stay_strings_and_unquoted_status_codes_are_read() -> None:
    (listing, *_) = openapi_tools(INVENTORY).tools
    item = listing.definition["outputSchema"]["properties"]["result"]["items"]
    assert item["properties"]["created"]["examples"] == ["2020-01-01"]  # not a date object: JSON again
    json.dumps(listing.definition)


def test_a_document_is_fetched_once_from_a_loopback_url_json_or_yaml(served: str) -> None:
    assert openapi_tools(f"{served}/petstore.json").base_url == "https://petstore.example.com/v1"
    assert openapi_tools(f"{served}/inventory").base_url == "https://inventory.example.com/api/v2"


def test_a_relative_server_resolves_against_the_documents_url_and_no_servers_is_its_root(served: str) -> None:
    assert openapi_tools(f"{served}/docs/relative.json").base_url == f"{served}/api/v3"
    assert openapi_tools(f"{served}/bare.json").base_url == served


def test_a_url_that_cannot_be_served_is_refused_in_one_line(served: str) -> None:
    assert "HTTP 404" in _refused(f"{served}/nothing.json")
    assert "a redirect to https://elsewhere.example.com/spec.json: give that URL" in _refused(f"{served}/moved")
    assert "must be on a loopback host" in _refused("http://api.example.com/openapi.json")
    assert "cannot fetch it" in _refused("http://127.0.0.1:9/openapi.json", timeout=2)


def test_swagger_2_and_other_versions_are_refused_with_the_fix(tmp_path: Path) -> None:
    assert "Swagger 2.0" in _refused({"swagger": "2.0", "paths": {}}) and "swagger2openapi" in _refused(
        {"swagger": "2.0"}
    )
    assert "OpenAPI 3.2.0; app.openapi reads 3.0 and 3.1" in _refused(_doc(openapi="3.2.0"))
    assert "no `openapi` version" in _refused({"paths": {}})
    assert "no `paths` object" in _refused({"openapi": "3.1.0"})
    (tmp_path / "list.yaml").write_text("- 1\n- 2\n")
    assert "an object at the top" in _refused(tmp_path / "list.yaml")


def test_files_that_cannot_be_read_or_parsed_are_refused_in_one_line(tmp_path: Path) -> None:
    assert "cannot read it: No such file or directory" in _refused(tmp_path / "missing.json")
    (tmp_path / "bad.json").write_text('{"openapi": "3.1.0",\n "paths": }')
    assert _refused(tmp_path / "bad.json") == "not valid JSON: Expecting value at line 2 column 11"
    (tmp_path / "bad.yaml").write_text("openapi: 3.1.0\npaths: [\n")
    assert _refused(tmp_path / "bad.yaml").startswith("not valid YAML: ")
    (tmp_path / "loop.yaml").write_text("openapi: 3.1.0\npaths: &a\n  x: *a\n")
    assert "refers to itself" in _refused(tmp_path / "loop.yaml")


def test_the_refusal_names_the_users_line_and_is_a_declaration_error(tmp_path: Path) -> None:
    app = MCPApp("t")
    with pytest.raises(DeclarationError) as refused:
        app.openapi({"swagger": "2.0"})
    assert str(refused.value).startswith(f"{Path(__file__).relative_to(Path.cwd())}:")
    assert "app.openapi(dict): it is Swagger 2.0" in str(refused.value)


def test_server_variables_take_their_defaults_and_base_url_overrides() -> None:
    assert openapi_tools(INVENTORY).base_url == "https://inventory.example.com/api/v2"
    assert openapi_tools(INVENTORY, base_url="https://staging.example.com/api/").base_url == (
        "https://staging.example.com/api"
    )
    assert openapi_tools(PETSTORE, base_url="http://127.0.0.1:8000/v1").base_url == "http://127.0.0.1:8000/v1"


def test_an_api_gateway_exports_base_path_variable_makes_one_slash() -> None:
    url = "https://abc123.execute-api.eu-west-1.amazonaws.com/{basePath}"
    server = {"url": url, "variables": {"basePath": {"default": "/prod"}}}
    assert openapi_tools(_doc(servers=[server])).base_url == "https://abc123.execute-api.eu-west-1.amazonaws.com/prod"


def test_without_a_usable_server_the_refusal_says_to_pass_base_url() -> None:
    assert _refused(_doc()) == "it names no server to call: pass base_url='https://...'"
    assert "is relative: pass base_url=" in _refused(_doc(servers=[{"url": "/v1"}]))
    assert "is not https://" in _refused(_doc(servers=[{"url": "http://api.example.com"}]))
    assert "must be an https:// URL" in _refused(PETSTORE, base_url="http://api.example.com/v1")
