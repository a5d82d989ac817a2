"""`lambda-mcp call` and `lambda-mcp list`, run as a user runs them (a subprocess), against `lambda-mcp
dev` (streaming) and `dev --lambda` behind each emulated front door (HTTP API, REST API, Function
URL), in both eras; with jwt auth and a bearer token; through a SigV4-checking front door; with an
elicitation answered on stdin. Every failure is one line on stderr with the documented exit status.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from botocore.auth import SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials

from lambda_mcp.remote.prompt import coerce
from lambda_mcp.remote.sigv4 import default_service, region_for
from tests.support.cli_runs import one_line_failure, run
from tests.support.issuer import LocalIssuer
from tests.support.processes import ServerProcess, free_port, lambda_mcp_dev
from tests.support.sigv4_door import SigV4Door

APP = "examples/conformance/server.py"
ERAS = ["2026-07-28", "2025-11-25"]
SIMPLE = "This is a simple text response for testing."
DOORS = ["streaming", "http", "rest", "url"]


def _serve(door: str, tmp: Path, env: dict[str, str] | None = None, app: str = APP) -> ServerProcess:
    port = free_port()
    path = "/v1/mcp" if door == "rest" else "/mcp"
    extra = [] if door == "streaming" else ["--api", door]
    return lambda_mcp_dev(
        app,
        through_lambda=door != "streaming",
        port=port,
        path=path,
        env=env,
        extra_args=extra,
        log=tmp / f"{door}.log",
    )


@pytest.fixture(scope="module", params=DOORS)
def server(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    """The conformance app under `dev` (streaming) and `dev --lambda --api http|rest|url`."""
    process = _serve(request.param, tmp_path_factory.mktemp("remote"))
    yield process
    process.stop()


@pytest.fixture(scope="module")
def lambda_http(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    process = _serve("http", tmp_path_factory.mktemp("remote-http"))
    yield process
    process.stop()


# -- both eras, every front door ------------------------------------------------------------------------
@pytest.mark.parametrize("era", ERAS)
def test_call_and_list_work_against_every_front_door_in_both_eras(server: ServerProcess, era: str) -> None:
    called = run("call", server.url, "test_simple_text", "--protocol-version", era)
    assert (called.returncode, called.stdout, called.stderr) == (0, SIMPLE + "\n", "")
    listed = run("list", server.url, "--protocol-version", era)
    assert listed.returncode == 0, listed.stderr
    lines = listed.stdout.splitlines()
    assert "test_simple_text()  Tests simple text content response" in lines
    assert any(line.startswith("test_elicitation(message: string)  ") for line in lines) and len(lines) > 30


@pytest.mark.parametrize("era", ERAS)
def test_an_elicitation_is_answered_on_stdin_with_prompts_on_stderr(server: ServerProcess, era: str) -> None:
    asked = ["call", server.url, "test_elicitation", "--arguments", '{"message": "Who are you?"}']
    accepted = run(*asked, "--protocol-version", era, stdin="a\nalice\nalice@example.com\n")
    assert accepted.returncode == 0, accepted.stderr
    content = {"username": "alice", "email": "alice@example.com"}
    assert accepted.stdout == f"User response: action=accept, content={json.dumps(content)}\n"
    assert "Who are you?" in accepted.stderr and "User's email address" in accepted.stderr
    assert "Who are you?" not in accepted.stdout
    declined = run(*asked, "--protocol-version", era, stdin="d\n")
    assert declined.stdout == "User response: action=decline, content={}\n"
    ended = run(*asked, "--protocol-version", era, stdin="")  # no input at all: cancelled, never stuck
    assert ended.stdout == "User response: action=cancel, content={}\n"


def test_mrtr_rounds_are_answered_one_after_another(lambda_http: ServerProcess) -> None:
    done = run("call", lambda_http.url, "test_input_required_result_multi_round", stdin="a\nalice\na\nblue\n")
    assert done.returncode == 0, done.stderr
    assert "alice" in done.stdout and "blue" in done.stdout
    assert done.stderr.index("Step 1") < done.stderr.index("Step 2")


@pytest.mark.parametrize("era", ERAS)
def test_form_answers_are_coerced_to_the_schema_and_bad_ones_asked_again(lambda_http: ServerProcess, era: str) -> None:
    # name: default; age: "forty" refused, then 41; score 2.5; status: choice 2; verified: no
    answers = "a\n\nforty\n41\n2.5\n2\nno\n"
    done = run("call", lambda_http.url, "test_elicitation_sep1034_defaults", "--protocol-version", era, stdin=answers)
    assert done.returncode == 0, done.stderr
    content = json.loads(done.stdout.split("content=", 1)[1])
    assert content == {"name": "John Doe", "age": 41, "score": 2.5, "status": "inactive", "verified": False}
    assert "a whole number, please" in done.stderr


def test_coercion_follows_each_primitive_schema() -> None:
    assert coerce("3", {"type": "integer"}) == 3 and coerce("3", {"type": "number"}) == 3
    assert coerce("yes", {"type": "boolean"}) is True and coerce("off", {"type": "boolean"}) is False
    titled = {"type": "string", "oneOf": [{"const": "#f00", "title": "Red"}, {"const": "#00f", "title": "Blue"}]}
    assert coerce("blue", titled) == "#00f" and coerce("1", titled) == "#f00"
    multi = {"type": "array", "items": {"type": "string", "enum": ["a", "b", "c"]}}
    assert coerce("c, 1", multi) == ["c", "a"]
    for text, field in [("x", {"type": "integer"}), ("maybe", {"type": "boolean"}), ("d", {"enum": ["a", "b"]})]:
        with pytest.raises(ValueError):
            coerce(text, field)


# -- output and exit statuses ---------------------------------------------------------------------------
def test_non_text_blocks_are_summarised_and_json_prints_the_raw_result(lambda_http: ServerProcess) -> None:
    done = run("call", lambda_http.url, "test_multiple_content_types")
    assert done.returncode == 0
    assert "[image image/png, 70 bytes]" in done.stdout and "[resource test://mixed-content-resource" in done.stdout
    raw = run("call", lambda_http.url, "test_multiple_content_types", "--json")
    result = json.loads(raw.stdout)
    assert [block["type"] for block in result["content"]] == ["text", "image", "resource"]
    assert result["resultType"] == "complete"  # the 2026 result, untouched


@pytest.mark.parametrize("era", ERAS)
def test_an_error_result_and_a_json_rpc_error_exit_1_on_one_line(lambda_http: ServerProcess, era: str) -> None:
    failed = run("call", lambda_http.url, "test_error_handling", "--protocol-version", era)
    assert one_line_failure(failed, 1) == "error: This tool intentionally returns an error for testing"
    assert failed.stdout == ""
    unknown = run("call", lambda_http.url, "no_such_tool", "--protocol-version", era)
    assert "-32602" in one_line_failure(unknown, 1) and "no_such_tool" in unknown.stderr
    raw = run("call", lambda_http.url, "test_error_handling", "--protocol-version", era, "--json")
    assert raw.returncode == 1 and json.loads(raw.stdout)["isError"] is True


def test_usage_and_connection_failures_exit_2_on_one_line(lambda_http: ServerProcess) -> None:
    nobody = f"http://127.0.0.1:{free_port()}/mcp"
    assert "cannot reach" in one_line_failure(run("call", nobody, "x"), 2)
    assert "--arguments is not JSON" in one_line_failure(run("call", lambda_http.url, "x", "-a", "{oops"), 2)
    assert "must be a JSON object" in one_line_failure(run("call", lambda_http.url, "x", "-a", "[1]"), 2)
    assert "required: TOOL" in one_line_failure(run("call", lambda_http.url), 2)
    assert "not an http(s) URL" in one_line_failure(run("list", "127.0.0.1:8000/mcp"), 2)
    elsewhere = lambda_http.url.replace("/mcp", "/nothing-here")
    assert "HTTP 404" in one_line_failure(run("list", elsewhere), 2)
    both = run("list", lambda_http.url, "--sigv4", "--region", "us-east-1", "--bearer", "t")
    assert "choose one" in one_line_failure(both, 2)


@pytest.mark.parametrize("era", ["2025-06-18", "2025-03-26"])
def test_the_older_legacy_revisions_work_too(lambda_http: ServerProcess, era: str) -> None:
    called = run("call", lambda_http.url, "test_simple_text", "--protocol-version", era)
    assert (called.returncode, called.stdout) == (0, SIMPLE + "\n"), called.stderr
    listed = run("list", lambda_http.url, "--protocol-version", era)
    assert "test_simple_text()  Tests simple text content response" in listed.stdout.splitlines()


@pytest.mark.parametrize("era", ERAS)
def test_list_shows_resources_templates_and_prompts(lambda_http: ServerProcess, era: str) -> None:
    resources = run("list", lambda_http.url, "resources", "--protocol-version", era).stdout.splitlines()
    assert any(line.startswith("test://static-text (static-text)") for line in resources)
    templates = run("list", lambda_http.url, "templates", "--protocol-version", era).stdout
    assert "test://template/{id}/data" in templates
    prompts = run("list", lambda_http.url, "prompts", "--protocol-version", era, "--json")
    names = [prompt["name"] for prompt in json.loads(prompts.stdout)["prompts"]]
    assert "test_prompt_with_arguments" in names


@pytest.mark.parametrize("era", ERAS)
def test_list_follows_next_cursor_to_the_last_page(tmp_path: Path, era: str) -> None:
    app = tmp_path / "paged.py"
    tools = "".join(f"\n@app.tool()\ndef tool_{i}() -> str:\n    return '{i}'\n" for i in range(7))
    app.write_text(f"from lambda_mcp import MCPApp\n\napp = MCPApp('paged', page_size=2)\n{tools}")
    process = _serve("http", tmp_path, app=str(app))
    try:
        first = httpx.post(
            process.url,
            json={"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"_meta": _META}},
            headers={"mcp-protocol-version": "2026-07-28", "mcp-method": "tools/list", "accept": _ACCEPT},
        ).json()["result"]
        assert len(first["tools"]) == 2 and first["nextCursor"]  # the server does page
        listed = run("list", process.url, "--protocol-version", era)
        assert [line.split("(")[0] for line in listed.stdout.splitlines()] == [f"tool_{i}" for i in range(7)]
    finally:
        process.stop()


def test_a_tool_routed_on_an_argument_gets_its_mcp_param_header(lambda_http: ServerProcess) -> None:
    done = run("call", lambda_http.url, "test_x_mcp_header", "-a", '{"region": "eu-west-3"}')
    assert (done.returncode, done.stdout) == (0, "region=eu-west-3\n"), done.stderr


_META = {"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}}
_ACCEPT = "application/json, text/event-stream"


# -- jwt -------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("door", ["http", "rest", "url"])
def test_jwt_mode_needs_the_bearer_token_and_works_with_it_in_both_eras(
    issuer: LocalIssuer, tmp_path: Path, door: str
) -> None:
    port = free_port()
    path = "/v1/mcp" if door == "rest" else "/mcp"
    url = f"http://127.0.0.1:{port}{path}"
    env = {
        "LAMBDA_MCP_AUTH": "jwt",
        "LAMBDA_MCP_AUTH_ISSUER": issuer.url,
        "LAMBDA_MCP_AUTH_AUDIENCE": url,
        "LAMBDA_MCP_AUTH_SCOPES": "mcp:tools",
    }
    process = lambda_mcp_dev(
        APP, through_lambda=True, env=env, port=port, path=path, extra_args=["--api", door], log=tmp_path / "jwt.log"
    )
    try:
        for era in ERAS:
            version = ["--protocol-version", era]
            refused = one_line_failure(run("call", url, "test_simple_text", *version), 2)
            assert "HTTP 401" in refused and "--bearer TOKEN" in refused
            expired = run("call", url, "test_simple_text", *version, "--bearer", issuer.token(url, lifetime=-600))
            assert "HTTP 401" in one_line_failure(expired, 2) and "refused" in expired.stderr
            lacking = run("call", url, "test_simple_text", *version, "--bearer", issuer.token(url, scope="other"))
            assert "HTTP 403" in one_line_failure(lacking, 2) and "mcp:tools" in lacking.stderr
            token = issuer.token(url)
            called = run("call", url, "test_simple_text", *version, "--bearer", token)
            assert (called.returncode, called.stdout) == (0, SIMPLE + "\n"), called.stderr
            header = run("list", url, *version, "--header", f"Authorization: Bearer {token}")
            assert header.returncode == 0 and "test_simple_text()" in header.stdout
    finally:
        process.stop()


# -- SigV4 ------------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def door(lambda_http: ServerProcess) -> Iterator[SigV4Door]:
    front = SigV4Door(f"http://127.0.0.1:{lambda_http.port}", region="us-east-1", service="execute-api")
    yield front
    front.stop()


def _signed(url: str, body: bytes, secret: str = "testing") -> dict[str, str]:
    request = AWSRequest(method="POST", url=url, data=body, headers={"content-type": "application/json"})
    SigV4Auth(Credentials("testing", secret, "testing"), "execute-api", "us-east-1").add_auth(request)
    return dict(request.headers.items())


def test_the_door_refuses_unsigned_and_mis_signed_requests_and_passes_a_signed_one(door: SigV4Door) -> None:
    url = f"{door.origin}/mcp"
    message = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"_meta": _META}}
    body = json.dumps(message).encode()
    routing = {"mcp-protocol-version": "2026-07-28", "mcp-method": "tools/list", "accept": _ACCEPT}
    unsigned = httpx.post(url, content=body, headers={"content-type": "application/json", **routing})
    assert unsigned.status_code == 403 and door.refused[-1] == "no SigV4 Authorization header"
    wrong_key = httpx.post(url, content=body, headers={**_signed(url, body, secret="guessed"), **routing})
    assert wrong_key.status_code == 403 and door.refused[-1] == "signature does not match"
    tampered = httpx.post(url, content=body + b" ", headers={**_signed(url, body), **routing})  # one byte more
    assert tampered.status_code == 403 and door.refused[-1] == "signature does not match"
    # the routing headers were not signed above, but they are sent: a signed request passes with them unsigned
    passed = httpx.post(url, content=body, headers={**_signed(url, body), **routing})
    assert passed.status_code == 200 and passed.json()["result"]["tools"]


@pytest.mark.parametrize("era", ERAS)
def test_call_with_sigv4_goes_through_the_door_in_both_eras(door: SigV4Door, era: str) -> None:
    url = f"{door.origin}/mcp"
    before = door.accepted
    called = run("call", url, "test_simple_text", "--sigv4", "--region", "us-east-1", "--protocol-version", era)
    assert (called.returncode, called.stdout) == (0, SIMPLE + "\n"), called.stderr
    asked = ["call", url, "test_elicitation", "-a", '{"message": "m"}', "--sigv4", "--protocol-version", era]
    elicited = run(*asked, stdin="a\nbob\nbob@example.com\n")  # region from AWS_REGION this time
    assert elicited.returncode == 0 and '"username": "bob"' in elicited.stdout, elicited.stderr
    assert door.accepted - before >= (2 if era == ERAS[0] else 6)  # initialize, initialized, answer, DELETE...
    unsigned = one_line_failure(run("call", url, "test_simple_text", "--protocol-version", era), 2)
    assert "HTTP 403" in unsigned and "pass --sigv4" in unsigned
    wrong = run("call", url, "test_simple_text", "--sigv4", env={"AWS_SECRET_ACCESS_KEY": "guessed"})
    assert "signature was refused" in one_line_failure(wrong, 2)
    elsewhere = run("call", url, "test_simple_text", "--sigv4", "--region", "eu-west-1")
    assert "signature was refused" in one_line_failure(elsewhere, 2)
    assert door.refused[-1] == "wrong credential scope testing/eu-west-1/execute-api"


def test_the_service_and_region_come_from_the_host_name() -> None:
    function_url = "https://abcdef.lambda-url.eu-west-2.on.aws/mcp"
    api = "https://a1b2c3.execute-api.ap-southeast-2.amazonaws.com/prod/mcp"
    assert (default_service(function_url), region_for(function_url, None)) == ("lambda", "eu-west-2")
    assert (default_service(api), region_for(api, None)) == ("execute-api", "ap-southeast-2")
    assert region_for(api, "us-west-2") == "us-west-2"
    assert (default_service("https://mcp.example.com/mcp"), region_for("https://mcp.example.com/mcp", None)) == (
        "execute-api",
        "us-east-1",  # the environment's
    )


# -- tasks ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("era", ERAS)
def test_a_task_only_tool_is_run_as_a_task_and_its_elicitation_asked(tmp_path: Path, era: str) -> None:
    process = _serve("http", tmp_path, app="tests/apps/interaction.py")
    try:
        version = ["--protocol-version", era]
        chatty = run("call", process.url, "chatty_job", "-a", '{"steps": 2}', *version)
        assert (chatty.returncode, chatty.stdout) == (0, "done after 2 steps\n"), chatty.stderr
        if era == "2025-11-25":  # tasks/result relays the task's progress and logs (2026 tasks have no channel)
            assert "[info] step 1\n[progress 1/2]\n[info] step 2\n[progress 2/2]\n" in chatty.stderr, chatty.stderr
        approved = run("call", process.url, "approval_job", *version, stdin="a\nyes\n")
        assert (approved.returncode, approved.stdout) == (0, "approved=True\n"), approved.stderr
        assert "Approve?" in approved.stderr
        refused = run("call", process.url, "approval_job", *version, stdin="d\n")
        assert refused.stdout == "approved=None\n"
        slow = run("call", process.url, "until_cancelled", "-a", '{"seconds": 2}', "--timeout", "1", *version)
        if era == ERAS[0]:  # the kit makes an optional-task tool a task for a client declaring the extension
            assert (slow.returncode, slow.stdout) == (0, "finished\n"), slow.stderr  # polled: no read waits 2 s
        else:
            assert "no answer" in one_line_failure(slow, 2) and "--timeout" in slow.stderr
    finally:
        process.stop()
