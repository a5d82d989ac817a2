"""`lambda-mcp openapi check SPEC`: the tools a document makes (name, method and path, scopes), what is skipped
and why, with the filters of `app.openapi`; exit 2 and one line for a document it cannot serve."""

from __future__ import annotations

from pathlib import Path

import pytest

from lambda_mcp.cli import main
from tests.support.processes import ROOT

PETSTORE = str(ROOT / "tests/apps/openapi/petstore-3.1.json")
INVENTORY = str(ROOT / "tests/apps/openapi/inventory-3.0.yaml")


def _run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, list[str], str]:
    status = main(["openapi", "check", *args])
    out, err = capsys.readouterr()
    return status, out.splitlines(), err


def test_it_lists_the_tools_and_the_skipped_operations_with_their_reasons(capsys: pytest.CaptureFixture[str]) -> None:
    status, lines, err = _run(capsys, PETSTORE)
    assert status == 0 and err == ""
    assert lines[0] == "base URL: https://petstore.example.com/v1"
    assert lines[1] == "tools (17):"
    assert lines[2].split() == ["listPets", "GET", "/pets", "scopes:", "pets:read"]
    assert "get_health   GET /health" in "\n".join(lines) and lines[lines.index("tools (17):") + 13].endswith(
        "scopes: -"
    )
    assert lines[-3:] == [
        "skipped (2):",
        "  POST /upload: its request body is multipart/form-data; only JSON and application/x-www-form-urlencoded"
        " are sent",
        "  GET /external: it uses the external $ref 'other.yaml#/components/schemas/Thing': bundle the document"
        " into one file first",
    ]


def test_the_filters_and_base_url_apply_as_in_app_openapi(capsys: pytest.CaptureFixture[str]) -> None:
    args = ["--base-url", "https://staging.example.com/v1", "--tag", "pets", "--exclude-tag", "admin"]
    args += ["--path", "/pets/*", "--exclude-path", "*/photo", "--method", "get", "--method", "DELETE"]
    status, lines, _ = _run(capsys, PETSTORE, *args)
    assert status == 0 and lines[0] == "base URL: https://staging.example.com/v1"
    assert [line.split()[0] for line in lines[2 : lines.index("skipped (0):")]] == [
        "searchPets",
        "showPetById",
        "deletePet",
    ]
    assert lines[-1] == "left out by the filters: 16 operations"
    status, lines, _ = _run(capsys, INVENTORY, "--method", "delete")
    assert lines[2].split() == [
        "deleteItem",
        "DELETE",
        "/items/{itemId}",
        "scopes:",
        "inventory:admin,",
        "inventory:write",
    ]


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ('{"swagger": "2.0", "paths": {}}', "it is Swagger 2.0, which app.openapi does not read"),
        ('{"openapi": "3.1.0", "paths": ', "not valid JSON: Expecting value at line 1 column 31"),
        ('{"openapi": "3.1.0", "paths": {}}', "it names no server to call: pass base_url='https://...'"),
    ],
)
def test_a_document_it_cannot_serve_is_exit_2_and_one_line(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, content: str, message: str
) -> None:
    spec = tmp_path / "spec.json"
    spec.write_text(content)
    status, lines, err = _run(capsys, str(spec))
    assert status == 2 and lines == []
    assert err.count("\n") == 1 and err.startswith(f"lambda-mcp openapi check: {spec}: {message}")


def test_a_bad_option_is_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    status, _, err = _run(capsys, PETSTORE, "--method", "fetch")
    assert status == 2 and err == f"lambda-mcp openapi check: {PETSTORE}: methods: 'fetch' is not an HTTP method\n"
    with pytest.raises(SystemExit) as usage:
        main(["openapi"])
    assert usage.value.code == 2 and "check" in capsys.readouterr().err
