"""Every Lambda entrypoint runs with a deployment's dependencies alone: the layer's lock, boto3 (the Lambda
runtime's) and the kit installed with --no-deps, in a clean venv where nothing of the dev extra (the MCP
SDK, python-multipart, uvicorn) can be imported.

The suite's own venv hides a missing runtime dependency: it once hid that the authorization facade's
consent POST answered 500 in a real install (Starlette's form parser needs python-multipart, which only
the dev extra brought). Here the official Python SDK signs in through the facade end to end, against the
real upstream identity provider, through `tests/support/runtime_door.py` (the HTTP handler behind an
emulated HTTP API, run by the clean venv); and `tests/support/runtime_probe.py` invokes each entrypoint in
each configuration a deployment can run (every auth mode, tracing on, the REST API's authorizer, the task
worker) there, so an optional import that only the dev extra satisfies fails here first.

The lock's wheels are for Lambda (manylinux aarch64, CPython 3.13); the venv gets the same versions for
this machine, from the index pip is configured with.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import httpx
import pytest
import yaml

from lambda_mcp.facade.signing import generate_pem
from lambda_mcp.local.gateways import Caller, http_api_event
from tests.infra.builds import DURABLE_LOCK, FAKE_AWS, LOCK, clean_env
from tests.integration.test_auth_lambda import INITIALIZE, LIST
from tests.support.agent_keys import ASSERTION_TYPE, KeyPair, client_assertion, dpop_proof, operator_entry
from tests.support.facade_clients import TOOL_TEXT, python_sdk_flow
from tests.support.issuer import LocalIssuer
from tests.support.lambda_endpoint import LambdaEndpoint
from tests.support.petstore_api import PetstoreAPI
from tests.support.processes import ROOT, ServerProcess, free_port, lambda_mcp_dev
from tests.support.upstream import Upstream, start_upstream

pytestmark = pytest.mark.anyio
APP = str(ROOT / "examples/conformance/server.py")
ABSENT = ("multipart", "python_multipart", "mcp", "uvicorn")
"""What the dev extra brings and a deployment lacks: none of it may be importable in the runtime venv."""
DOMAIN = "mcp.example.com"
"""The API's domain on the probes' events (nothing is sent there)."""
RESOURCE = f"https://{DOMAIN}/mcp"


def locked_pins(lock: Path) -> list[str]:
    """The lock's `name==version` lines, without their hashes (which are the Lambda platform's wheels')."""
    return re.findall(r"^([A-Za-z0-9._-]+==[^\s\\]+)", lock.read_text(), re.MULTILINE)


@dataclass(frozen=True)
class Runtime:
    """A venv holding only what a deployment has; its scripts run isolated (`-I`: no PYTHONPATH, no
    script directory, no user site), so only the venv's packages can be imported."""

    root: Path
    python: Path
    env: dict[str, str]
    """Fake AWS credentials and an AWS endpoint where nothing listens: no call can reach AWS."""

    def probe(self, entrypoint: str, events: list[dict[str, Any]], **settings: str) -> dict[str, Any]:
        """tests/support/runtime_probe.py's report of `lambda_mcp.entrypoints.<entrypoint>` given `events`."""
        script = str(ROOT / "tests/support/runtime_probe.py")
        done = subprocess.run(
            [str(self.python), "-I", script, entrypoint],
            input=json.dumps(events),
            cwd=self.root,
            env={**self.env, **settings},
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
        report: dict[str, Any] = json.loads(done.stdout.splitlines()[-1])  # the handlers log before it
        assert Path(report["kit"]).is_relative_to(self.root), report["kit"]  # the installed kit, not the checkout
        return report

    def door(self, port: int, log: Path, **settings: str) -> ServerProcess:
        """tests/support/runtime_door.py: the HTTP handler behind an emulated HTTP API, on `port`."""
        args = [str(self.python), "-I", str(ROOT / "tests/support/runtime_door.py"), str(port)]
        return ServerProcess(args, port, {**self.env, **settings}, log, cwd=self.root)


@pytest.fixture(scope="module")
def runtime(tmp_path_factory: pytest.TempPathFactory) -> Runtime:
    return _venv(tmp_path_factory.mktemp("runtime"), [*locked_pins(LOCK), "boto3"])


@pytest.fixture(scope="module")
def durable_runtime(tmp_path_factory: pytest.TempPathFactory) -> Runtime:
    """The durable worker's: its layers (DepsLayer, KitLayer, DurableLayer) and nothing else."""
    return _venv(tmp_path_factory.mktemp("durable-runtime"), [*locked_pins(LOCK), *locked_pins(DURABLE_LOCK)])


def _venv(root: Path, pins: list[str]) -> Runtime:
    env = clean_env(dict(os.environ))
    # The checkout's files, not the checkout: pip builds a directory in place, and would write build/ into it.
    kit = root / "kit"
    shutil.copytree(ROOT / "src", kit / "src", ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, kit / name)
    venv = root / "venv"
    python = venv / "bin/python"
    steps = [
        [sys.executable, "-m", "venv", str(venv)],
        [str(python), "-I", "-m", "pip", "install", "--quiet", *pins],
        [str(python), "-I", "-m", "pip", "install", "--quiet", "--no-deps", str(kit)],
    ]
    for step in steps:
        done = subprocess.run(step, cwd=root, env=env, capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, f"{step}: {done.stdout[-3000:]}{done.stderr[-3000:]}"
    absent = f"import importlib.util as u; print([n for n in {ABSENT!r} if u.find_spec(n)])"
    found = subprocess.run([str(python), "-I", "-c", absent], env=env, capture_output=True, text=True, check=True)
    assert found.stdout.strip() == "[]", f"the runtime venv holds what a deployment lacks: {found.stdout}"
    nowhere = f"http://127.0.0.1:{free_port()}"  # nothing listens: a missed fake fails, and never reaches AWS
    return Runtime(root, python, {**env, **FAKE_AWS, "AWS_ENDPOINT_URL": nowhere, "LAMBDA_MCP_APP": APP})


@pytest.fixture(scope="module")
def door_port() -> int:
    return free_port()


@pytest.fixture(scope="module")
def upstream(door_port: int, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Upstream]:
    callback = f"http://127.0.0.1:{door_port}/oauth/callback"
    started = start_upstream(tmp_path_factory.mktemp("upstream") / "oidc.log", [callback])
    yield started
    started.stop()


def proxy_settings(upstream: Upstream, resource: str) -> dict[str, str]:
    """Auth `proxy` for `resource`, as a deployment sets it (its own signing key and state key)."""
    return {
        "LAMBDA_MCP_AUTH": "proxy",
        "LAMBDA_MCP_AUTH_AUDIENCE": resource,
        "LAMBDA_MCP_AUTH_SCOPES": "mcp:tools",
        "LAMBDA_MCP_AUTH_SIGNING_KEY": generate_pem(),
        "LAMBDA_MCP_STATE_KEY": "runtime-only-state-key-0123456789abcdef",
        **upstream.facade_env(),
    }


@pytest.fixture(scope="module")
def door(
    runtime: Runtime, upstream: Upstream, door_port: int, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[ServerProcess]:
    settings = proxy_settings(upstream, f"http://127.0.0.1:{door_port}/mcp")
    log = tmp_path_factory.mktemp("door") / "door.log"
    process = runtime.door(door_port, log, **settings)
    yield process
    process.stop()


async def test_the_python_sdk_signs_in_through_the_facade_with_the_runtime_dependencies_alone(
    door: ServerProcess,
) -> None:
    assert httpx.post(door.url, json={}).status_code == 401  # the client starts without a token
    try:
        flow = await python_sdk_flow(door.url, "lambda-mcp runtime only", mode="legacy")
    except Exception:
        print(door.output())  # the handler's traceback, shown with the failure
        raise
    assert flow.texts == [TOOL_TEXT, TOOL_TEXT]
    (first,) = flow.user.sign_ins  # the consent page was shown and its Approve posted; the refresh needed no user
    assert "lambda-mcp runtime only" in first.consent_page and first.query.get("code")
    assert flow.issued.refresh_token and flow.refreshed.refresh_token
    assert flow.issued.access_token != flow.refreshed.access_token


def _event(
    body: dict[str, Any] | None, token: str | None = None, method: str = "POST", path: str = "/mcp"
) -> dict[str, Any]:
    headers = {"host": DOMAIN, "content-type": "application/json", "accept": "application/json, text/event-stream"}
    if body is not None and body["method"] != "initialize":
        headers |= {"mcp-protocol-version": "2026-07-28", "mcp-method": body["method"]}
    if token is not None:
        headers["authorization"] = f"Bearer {token}"
    return http_api_event(method, path, headers, json.dumps(body).encode() if body else b"", DOMAIN)


def _listed(answer: dict[str, Any]) -> list[str]:
    assert answer.get("statusCode") == 200, answer
    return [tool["name"] for tool in json.loads(answer["body"])["result"]["tools"]]


def test_auth_none_answers_both_eras(runtime: Runtime) -> None:
    report = runtime.probe("http", [_event(INITIALIZE), _event(LIST)], LAMBDA_MCP_AUTH="none")
    initialized, listed = report["answers"]
    assert initialized["statusCode"] == 200 and json.loads(initialized["body"])["result"]["serverInfo"], initialized
    assert "test_simple_text" in _listed(listed)
    assert "jwt" not in report["imported"]  # only `jwt` and `proxy` validate tokens


def test_auth_jwt_checks_tokens_with_the_issuers_keys(runtime: Runtime, issuer: LocalIssuer) -> None:
    events = [_event(LIST, issuer.token(RESOURCE)), _event(LIST), _event(LIST, issuer.token(RESOURCE, key="foreign"))]
    jwt = {"LAMBDA_MCP_AUTH": "jwt", "LAMBDA_MCP_AUTH_ISSUER": issuer.url, "LAMBDA_MCP_AUTH_AUDIENCE": RESOURCE}
    report = runtime.probe("http", events, **jwt, LAMBDA_MCP_AUTH_SCOPES="mcp:tools")
    valid, missing, forged = report["answers"]
    assert "test_simple_text" in _listed(valid)
    assert [missing["statusCode"], forged["statusCode"]] == [401, 401], report
    assert "jwt" in report["imported"] and issuer.jwks_fetches >= 1


def test_auth_gateway_takes_the_identity_the_authorizer_put_on_the_event(runtime: Runtime) -> None:
    caller = Caller(claims={"iss": "https://issuer.example.com", "sub": "alice", "scope": "mcp:tools"})
    events = [caller.apply(_event(LIST), "http"), _event(LIST)]
    report = runtime.probe("http", events, LAMBDA_MCP_AUTH="gateway", LAMBDA_MCP_AUTH_SCOPES="mcp:tools")
    identified, anonymous = report["answers"]
    assert "test_simple_text" in _listed(identified)
    assert anonymous["statusCode"] == 401, anonymous


def test_auth_proxy_challenges_and_serves_its_metadata(runtime: Runtime, upstream: Upstream) -> None:
    metadata = _event(None, method="GET", path="/.well-known/oauth-authorization-server")
    report = runtime.probe("http", [_event(LIST), metadata], **proxy_settings(upstream, RESOURCE))
    challenged, served = report["answers"]
    assert challenged["statusCode"] == 401 and "resource_metadata=" in challenged["headers"]["www-authenticate"]
    assert served["statusCode"] == 200 and json.loads(served["body"])["issuer"] == f"https://{DOMAIN}", served
    assert "cryptography" in report["imported"]  # the facade signs its tokens (ES256)


def test_an_agent_gets_a_dpop_bound_token_by_client_credentials_and_calls_with_it(
    runtime: Runtime, upstream: Upstream
) -> None:
    """The machine grant, its RFC 7523 assertion and DPoP (issue 36) with the deployment's packages alone."""
    agent, key = KeyPair(), KeyPair()
    settings = proxy_settings(upstream, RESOURCE)
    settings["LAMBDA_MCP_AUTH_CLIENTS"] = json.dumps([operator_entry("agent-1", agent, "mcp:tools")])
    token_url = f"https://{DOMAIN}/oauth/token"
    form = {
        "grant_type": "client_credentials",
        "client_assertion_type": ASSERTION_TYPE,
        "client_assertion": client_assertion(agent, "agent-1", f"https://{DOMAIN}"),
    }
    headers = {"host": DOMAIN, "content-type": "application/x-www-form-urlencoded"}
    headers["dpop"] = dpop_proof(key, "POST", token_url)
    request = http_api_event("POST", "/oauth/token", headers, urlencode(form).encode(), DOMAIN)
    (answer,) = runtime.probe("http", [request], **settings)["answers"]
    assert answer["statusCode"] == 200, answer
    tokens = json.loads(answer["body"])
    assert tokens["token_type"] == "DPoP"
    call = _event(LIST, method="POST")
    call["headers"] |= {"authorization": "DPoP " + tokens["access_token"]}
    call["headers"]["dpop"] = dpop_proof(key, "POST", RESOURCE, tokens["access_token"])
    unproven = _event(LIST, method="POST")
    unproven["headers"] |= {"authorization": "DPoP " + tokens["access_token"]}
    listed, refused = runtime.probe("http", [call, unproven], **settings)["answers"]
    assert "test_simple_text" in _listed(listed)
    assert refused["statusCode"] == 401 and refused["headers"]["www-authenticate"].startswith("DPoP ")


def test_tracing_on_sends_xray_segments(runtime: Runtime, tmp_path: Path) -> None:
    trace = "1-5759e988-bd862e3fe1be46a994272793"
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as daemon:  # the X-Ray daemon's UDP port, on loopback
        daemon.bind(("127.0.0.1", 0))
        daemon.settimeout(10)
        in_lambda = {  # what the Lambda runtime sets: Powertools' Tracer is on, rather than off as it is locally
            "LAMBDA_TASK_ROOT": str(tmp_path),
            "AWS_LAMBDA_FUNCTION_NAME": "runtime-only",
            "_X_AMZN_TRACE_ID": f"Root={trace};Parent=53995c3f42cd8ad8;Sampled=1",
            "AWS_XRAY_DAEMON_ADDRESS": f"127.0.0.1:{daemon.getsockname()[1]}",
        }
        tracing = {"LAMBDA_MCP_AUTH": "none", "LAMBDA_MCP_TRACING": "on"}
        report = runtime.probe("http", [_event(LIST)], **tracing, **in_lambda)
        sent = daemon.recv(65536).decode()
    assert "test_simple_text" in _listed(report["answers"][0])
    assert "aws_xray_sdk" in report["imported"]
    assert f'"trace_id": "{trace}"' in sent, sent


def test_the_rest_apis_authorizer_answers_token_events_in_both_its_modes(
    runtime: Runtime, issuer: LocalIssuer, upstream: Upstream
) -> None:
    method_arn = "arn:aws:execute-api:us-east-1:000000000000:api/v1/POST/mcp"
    audience = "https://api.execute-api.us-east-1.amazonaws.com/v1/mcp"  # the API's own URL (its default)
    events = [
        {"type": "TOKEN", "authorizationToken": f"Bearer {token}", "methodArn": method_arn}
        for token in (issuer.token(audience), issuer.token(audience, key="foreign"))
    ]
    settings = {"LAMBDA_MCP_AUTH": "jwt", "LAMBDA_MCP_AUTH_ISSUER": issuer.url, "LAMBDA_MCP_AUTH_SCOPES": "mcp:tools"}
    allowed, refused = runtime.probe("authorizer", events, **settings)["answers"]
    assert allowed["principalId"] == f"{issuer.url}#alice", allowed
    assert allowed["policyDocument"]["Statement"][0]["Effect"] == "Allow"
    assert refused == {"raised": "Unauthorized: Unauthorized"}
    facade = proxy_settings(upstream, audience)  # auth `proxy`: the facade's own tokens
    (unknown,) = runtime.probe("authorizer", events[1:], **facade)["answers"]
    assert unknown == {"raised": "Unauthorized: Unauthorized"}


def test_the_task_worker_handles_an_sqs_batch(runtime: Runtime) -> None:
    record = {
        "messageId": "m-1",
        "receiptHandle": "r-1",
        "body": json.dumps({"not": "a task"}),  # dropped without touching storage
        "attributes": {},
        "messageAttributes": {},
        "md5OfBody": "",
        "eventSource": "aws:sqs",
        "eventSourceARN": "arn:aws:sqs:us-east-1:000000000000:tasks",
        "awsRegion": "us-east-1",
    }
    settings = {
        "LAMBDA_MCP_AUTH": "none",
        "LAMBDA_MCP_TABLE_NAME": "state",
        "LAMBDA_MCP_TASK_QUEUE_URL": "https://sqs.us-east-1.amazonaws.com/000000000000/tasks",
    }
    report = runtime.probe("worker", [{"Records": [record]}, {"Records": "none"}], **settings)
    assert report["answers"][0] == {"batchItemFailures": []}
    assert report["answers"][1]["raised"].startswith("ValueError"), report  # not an SQS event


def test_the_durable_worker_starts_with_its_layers_alone_and_refuses_a_plain_event(durable_runtime: Runtime) -> None:
    settings = {
        "LAMBDA_MCP_AUTH": "none",
        "LAMBDA_MCP_TABLE_NAME": "state",
        "LAMBDA_MCP_TASK_BACKEND": "durable",
        "LAMBDA_MCP_TASK_DURABLE_FUNCTION": "arn:aws:lambda:us-east-1:000000000000:function:worker:live",
    }
    report = durable_runtime.probe("durable_worker", [{"taskId": "t-1"}], **settings)
    # the SDK (from DurableLayer) answers an event that is no durable invocation: the function lacks DurableConfig
    assert "durability" in report["answers"][0]["raised"], report


def _call(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    body = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {**LIST["params"], "name": name}}
    body["params"]["arguments"] = arguments
    event = _event(body)
    event["headers"]["mcp-name"] = name
    return event


def test_openapi_mounted_and_lambda_tools_work_with_the_runtime_dependencies_alone(
    runtime: Runtime, tmp_path: Path
) -> None:
    """httpx (the calls) and PyYAML (the document) come from the layer's lock; botocore from the runtime."""
    spec = tmp_path / "petstore.yaml"  # the 3.1 document as YAML: the layer's PyYAML reads it
    spec.write_text(yaml.safe_dump(json.loads((ROOT / "tests/apps/openapi/petstore-3.1.json").read_text())))
    api, functions = PetstoreAPI(), LambdaEndpoint()
    functions.register("resizer", lambda event, context: {"width": event["width"] * 2})
    vendor = lambda_mcp_dev("tests/apps/mounted.py:vendor", through_lambda=False)
    settings = {
        "LAMBDA_MCP_AUTH": "none",
        "LAMBDA_MCP_APP": str(ROOT / "tests/apps/existing_runtime.py"),
        "EXISTING_SPEC": str(spec),
        "EXISTING_API": api.base_url,
        "EXISTING_VENDOR": vendor.url,
        "AWS_ENDPOINT_URL_LAMBDA": functions.url,
    }
    try:
        events = [
            _event(LIST),
            _call("showPetById", {"petId": 1}),
            _call("vendor_add", {"a": 40, "b": 2}),
            _call("resize", {"width": 21}),
        ]
        report = runtime.probe("http", events, **settings)
    finally:
        vendor.stop()
        functions.stop()
        api.stop()
    listed, pet, added, resized = report["answers"]
    names = _listed(listed)
    assert {"showPetById", "vendor_add", "resize"} <= set(names), names
    texts = [json.loads(answer["body"])["result"]["content"][0]["text"] for answer in (pet, added, resized)]
    assert json.loads(texts[0])["name"] == "Rex" and texts[1] == "42" and json.loads(texts[2]) == {"width": 42}
    assert [seen.path for seen in api.received] == ["/pets/1"]
    assert [invocation.payload for invocation in functions.received("resizer")] == [{"width": 21}]
