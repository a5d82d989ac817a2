"""The CLI client's commands as a user runs them (a subprocess) against `lambda-mcp dev`: `call URL TOOL
key=value` typed by the tool's schema, `list` with types and defaults, `read` and `prompt`, progress and
log lines on stderr while a tool runs, "this server offers no ..." for an absent capability, and the REST
API's stage named when a URL lacks it. Both eras wherever the era changes the wire.
"""

from __future__ import annotations

import json
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.cli_runs import CLI, one_line_failure, run
from tests.support.processes import ROOT, ServerProcess, free_port, lambda_mcp_dev

CONFORMANCE = "examples/conformance/server.py"
TYPED = "tests/apps/typed.py"
ERAS = ["2026-07-28", "2025-11-25"]
SEARCH = (
    "search(query: string, limit: integer = 10, exact: boolean = false, score: number = 0.5,"
    ' tags: array[string] | null = null, order: "asc" | "desc" = "asc", filters: object | null = null)'
)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    """tests/apps/typed.py (tools only) under `dev`, which streams."""
    process = lambda_mcp_dev(TYPED, through_lambda=False, log=tmp_path_factory.mktemp("typed") / "dev.log")
    yield process
    process.stop()


@pytest.fixture(scope="module")
def conformance(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    """The conformance app under `dev --lambda --api http` (tools, resources, templates, prompts)."""
    log = tmp_path_factory.mktemp("conformance") / "dev.log"
    process = lambda_mcp_dev(CONFORMANCE, through_lambda=True, extra_args=["--api", "http"], log=log)
    yield process
    process.stop()


def echoed(done: subprocess.CompletedProcess[str]) -> dict[str, list[object]]:
    """What tests/apps/typed.py's `search` received: each argument's value and Python type."""
    assert done.returncode == 0, done.stderr
    return dict(json.loads(done.stdout))


# -- key=value --------------------------------------------------------------------------------------------
@pytest.mark.parametrize("era", ERAS)
def test_key_value_arguments_are_typed_by_the_tools_schema(server: ServerProcess, era: str) -> None:
    words = ["query=7", "limit=3", "exact=yes", "score=2", 'tags=["a", "b"]', "order=desc", 'filters={"x": 1}']
    got = echoed(run("call", server.url, "search", *words, "--protocol-version", era))
    assert got == {
        "query": ["7", "str"],  # a string stays a string, even when it looks like a number
        "limit": [3, "int"],
        "exact": [True, "bool"],
        "score": [2.0, "float"],
        "tags": [["a", "b"], "list"],
        "order": ["desc", "str"],
        "filters": [{"x": 1}, "dict"],
    }
    nulls = echoed(run("call", server.url, "search", "query=a b=c", "tags=null", "score=-1.5", "exact=off"))
    assert nulls["query"] == ["a b=c", "str"] and nulls["tags"] == [None, "NoneType"]
    assert nulls["score"] == [-1.5, "float"] and nulls["exact"] == [False, "bool"]


def test_key_value_pairs_override_the_json_arguments(server: ServerProcess) -> None:
    got = echoed(run("call", server.url, "search", "-a", '{"query": "json", "limit": 1}', "limit=2"))
    assert got["query"] == ["json", "str"] and got["limit"] == [2, "int"]


@pytest.mark.parametrize(
    ("word", "said"),
    [
        ("limit=ten", "limit='ten': expected an integer: search(query: string"),
        ("exact=maybe", "exact='maybe': expected a boolean: "),
        ("score=1_0", "score='1_0': expected a number: "),
        ("tags=a,b", "tags='a,b': expected a JSON array or null: "),
        ("filters=[1]", "filters='[1]': expected a JSON object or null: "),
        ("order=up", 'order=\'up\': expected one of "asc", "desc": '),
        ("colour=red", "search takes no argument 'colour': search(query: string"),
        ("oops", "'oops' is not key=value (e.g. city=Paris; --arguments takes a JSON object)"),
    ],
)
def test_a_wrong_key_or_value_is_one_line_naming_the_signature(server: ServerProcess, word: str, said: str) -> None:
    done = run("call", server.url, "search", "query=q", word)
    assert said in one_line_failure(done, 2)
    if "=" in word:
        assert SEARCH in done.stderr


def test_key_value_for_a_tool_the_server_lacks_exits_1(server: ServerProcess) -> None:
    lacking = run("call", server.url, "nope", "a=1")
    assert "this server has no tool 'nope'" in one_line_failure(lacking, 1)


# -- list -------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("era", ERAS)
def test_list_shows_each_parameters_type_and_default(server: ServerProcess, era: str) -> None:
    listed = run("list", server.url, "--protocol-version", era)
    assert listed.returncode == 0, listed.stderr
    assert listed.stdout.splitlines() == [
        f"{SEARCH}  Echo the arguments as JSON, with their Python types.",
        "steps(seconds: number = 3.0)  Report progress and log at once, then work for `seconds`.",
    ]


# -- absent capabilities ----------------------------------------------------------------------------------
@pytest.mark.parametrize("era", ERAS)
def test_an_absent_capability_is_said_so_not_method_not_found(server: ServerProcess, era: str) -> None:
    version = ["--protocol-version", era]
    for kind, said in [("resources", "resources"), ("templates", "resource templates"), ("prompts", "prompts")]:
        listed = run("list", server.url, kind, *version)
        assert (listed.returncode, listed.stdout, listed.stderr) == (0, "", f"this server offers no {said}\n")
    raw = run("list", server.url, "prompts", "--json", *version)
    assert json.loads(raw.stdout) == {"prompts": []}
    read = one_line_failure(run("read", server.url, "test://anything", *version), 1)
    assert read == "lambda-mcp read: this server offers no resources"
    prompted = one_line_failure(run("prompt", server.url, "greeting", "name=Ada", *version), 1)
    assert prompted == "lambda-mcp prompt: this server offers no prompts"


# -- read and prompt --------------------------------------------------------------------------------------
@pytest.mark.parametrize("era", ERAS)
def test_read_prints_a_resources_text_and_summarises_a_blob(conformance: ServerProcess, era: str) -> None:
    version = ["--protocol-version", era]
    text = run("read", conformance.url, "test://static-text", *version)
    assert (text.returncode, text.stdout) == (0, "This is the content of the static text resource.\n"), text.stderr
    blob = run("read", conformance.url, "test://static-binary", *version)
    assert blob.stdout == "[blob test://static-binary, image/png, 70 bytes]\n", blob.stderr
    filled = run("read", conformance.url, "test://template/42/data", *version, "--json")
    (content,) = json.loads(filled.stdout)["contents"]
    assert json.loads(content["text"])["data"] == "Data for ID: 42"


@pytest.mark.parametrize("era", ERAS)
def test_prompt_prints_its_messages_with_their_roles(conformance: ServerProcess, era: str) -> None:
    version = ["--protocol-version", era]
    got = run("prompt", conformance.url, "test_prompt_with_arguments", "arg1=a", "arg2=b c", *version)
    assert (got.returncode, got.stdout) == (0, "user: Prompt with arguments: arg1='a', arg2='b c'\n"), got.stderr
    embedded = run("prompt", conformance.url, "test_prompt_with_embedded_resource", "resourceUri=test://x", *version)
    assert embedded.stdout.splitlines() == [
        "user: [resource test://x, text/plain]",
        "Embedded resource content for testing.",
        "user: Please process the embedded resource above.",
    ]
    wrong = run("prompt", conformance.url, "test_prompt_with_arguments", "arg3=c", *version)
    assert "takes no argument 'arg3' (it takes: arg1, arg2)" in one_line_failure(wrong, 2)
    asked = run("prompt", conformance.url, "test_input_required_result_prompt", *version, stdin="a\nsunny\n")
    assert asked.stdout == "user: Prompt with context: sunny\n" and "What context" in asked.stderr


# -- progress and logs ------------------------------------------------------------------------------------
@pytest.mark.parametrize("era", ERAS)
def test_progress_and_logs_show_on_stderr_while_the_tool_runs(server: ServerProcess, era: str) -> None:
    args = [str(CLI), "call", server.url, "steps", "seconds=8", "--protocol-version", era]
    started = time.monotonic()
    process = subprocess.Popen(args, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert process.stderr is not None and process.stdout is not None
        first = process.stderr.readline()
        assert first == "[progress 1/2] first half\n"
        assert time.monotonic() - started < 6 and process.poll() is None  # shown while the tool works on (8 s)
        assert process.stderr.readline() == "[info] halfway there\n"
        assert process.wait(timeout=30) == 0
        assert process.stderr.read() == "[progress 2/2]\n"  # the debug line is under the default level (info)
        assert process.stdout.read() == "all done\n"
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


@pytest.mark.parametrize("era", ERAS)
def test_log_level_chooses_the_log_lines_in_both_eras(
    conformance: ServerProcess, server: ServerProcess, era: str
) -> None:
    debug = run("call", server.url, "steps", "seconds=0", "--log-level", "debug", "--protocol-version", era)
    assert "[info] halfway there\n[debug] a detail\n" in debug.stderr
    quiet = run("call", server.url, "steps", "seconds=0", "--log-level", "error", "--protocol-version", era)
    assert quiet.stderr == "[progress 1/2] first half\n[progress 2/2]\n"
    through_lambda = run("call", conformance.url, "test_tool_with_progress", "--protocol-version", era)
    assert through_lambda.stderr.splitlines()[0] == "[progress 0/100] Completed step 0 of 100"
    assert through_lambda.stdout == "lambda-mcp-cli\n"  # the tool returns the progress token it was sent


# -- --login where no sign-in is asked for ------------------------------------------------------------------
def test_login_against_a_server_that_wants_no_token_just_calls(server: ServerProcess, tmp_path: Path) -> None:
    env = {"LAMBDA_MCP_CONFIG_DIR": str(tmp_path), "BROWSER": "/bin/false"}
    done = run("call", server.url, "steps", "seconds=0", "--login", "--log-level", "error", env=env)
    assert (done.returncode, done.stdout) == (0, "all done\n"), done.stderr
    assert "Signing in" not in done.stderr and list(tmp_path.iterdir()) == []  # nothing saved


# -- the REST API's stage ---------------------------------------------------------------------------------
def test_a_rest_api_url_without_its_stage_is_told_the_stage(tmp_path: Path) -> None:
    port = free_port()
    process = lambda_mcp_dev(
        CONFORMANCE, through_lambda=True, port=port, path="/v1/mcp", extra_args=["--api", "rest"], log=tmp_path / "l"
    )
    try:
        stageless = one_line_failure(run("list", f"http://127.0.0.1:{port}/mcp"), 2)
        assert (
            "HTTP 403 Forbidden: Missing Authentication Token (the usual cause: a REST API URL without its stage;"
            in (stageless)
        )
        assert f"try http://127.0.0.1:{port}/v1/mcp, template.yaml's stage" in stageless
        assert stageless.index("stage") < stageless.index("--sigv4")  # the stage first
        assert run("list", f"http://127.0.0.1:{port}/v1/mcp").returncode == 0
    finally:
        process.stop()
