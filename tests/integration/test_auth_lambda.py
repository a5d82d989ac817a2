"""Auth `jwt` through the Lambda path: `lambda-mcp dev examples/conformance/server.py --lambda` with
`LAMBDA_MCP_AUTH=jwt`, a local issuer publishing OpenID metadata and a JWKS over HTTP, and nothing else set.

Every bad token is answered 401 (a missing scope 403) with the `WWW-Authenticate` challenge, on both
eras and for GET and DELETE too, never 5xx; the challenge reaches the client through each emulated
front door the way template.yaml delivers it.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.support.issuer import LocalIssuer, public_pem
from tests.support.polling import wait_until
from tests.support.processes import ServerProcess, free_port, lambda_mcp_dev, ran

APP = "examples/conformance/server.py"
SCOPED = "tests/apps/scoped.py"
MODERN = {
    "content-type": "application/json",
    "accept": "application/json, text/event-stream",
    "mcp-protocol-version": "2026-07-28",
    "mcp-method": "tools/list",
}
LIST = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "tools/list",
    "params": {
        "_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {},
        }
    },
}
LEGACY = {"content-type": "application/json", "accept": "application/json, text/event-stream"}
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
}


def _serve(
    issuer: LocalIssuer,
    tmp: Path,
    *,
    api: str = "http",
    lambda_path: bool = True,
    app: str = APP,
    issuer_url: str | None = None,
    aws_endpoint: str | None = None,
) -> ServerProcess:
    port = free_port()
    path = "/v1/mcp" if api == "rest" else "/mcp"
    env = {
        "LAMBDA_MCP_AUTH": "jwt",
        "LAMBDA_MCP_AUTH_ISSUER": issuer_url or issuer.url,
        "LAMBDA_MCP_AUTH_AUDIENCE": f"http://127.0.0.1:{port}{path}",
        "LAMBDA_MCP_AUTH_SCOPES": "mcp:tools",
    }
    if aws_endpoint is not None:
        env["LAMBDA_MCP_TABLE_NAME"] = f"auth-{port}"
    extra = ["--api", api] if lambda_path else []
    return lambda_mcp_dev(
        app,
        through_lambda=lambda_path,
        env=env,
        port=port,
        path=path,
        log=tmp / f"{api}.log",
        extra_args=extra,
        aws_endpoint=aws_endpoint,
    )


@pytest.fixture(scope="module")
def server(issuer: LocalIssuer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    process = _serve(issuer, tmp_path_factory.mktemp("auth-http"))
    yield process
    process.stop()


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _unsigned(header: dict[str, Any], claims: dict[str, Any], sign: Any = None) -> str:
    head = _b64(json.dumps(header).encode()) + "." + _b64(json.dumps(claims).encode())
    return head + "." + (_b64(sign(head.encode())) if sign else "")


def bad_tokens(issuer: LocalIssuer, audience: str) -> dict[str, str | None]:
    now = int(time.time())
    claims = {"iss": issuer.url, "sub": "mallory", "aud": audience, "exp": now + 300, "scope": "mcp:tools"}
    secret = public_pem(issuer.rsa_key)
    return {
        "no token": None,
        "malformed": "not-a-jwt",
        "expired": issuer.token(audience, lifetime=-3600),
        "not yet valid": issuer.token(audience, not_before=now + 3600),
        "wrong issuer": issuer.token(audience, issuer="https://evil.example.com"),
        "wrong audience": issuer.token("https://someone-else.example.com/mcp"),
        "foreign signing key": issuer.token(audience, key="foreign"),
        "alg none": _unsigned({"alg": "none", "typ": "JWT", "kid": "rsa-1"}, claims),
        "HS256 with the public key": _unsigned(
            {"alg": "HS256", "typ": "JWT", "kid": "rsa-1"},
            claims,
            lambda d: hmac.new(secret, d, hashlib.sha256).digest(),
        ),
        "unknown kid": issuer.token(audience, key="foreign", kid="rotated-9"),
    }


def _auth(token: str | None) -> dict[str, str]:
    return {} if token is None else {"authorization": f"Bearer {token}"}


def _metadata_url(challenge: str) -> str:
    return challenge.split('resource_metadata="', 1)[1].split('"', 1)[0]


def test_no_token_gets_401_whose_metadata_names_the_issuer_and_the_resource(
    server: ServerProcess, issuer: LocalIssuer
) -> None:
    refused = httpx.post(server.url, json=LIST, headers=MODERN)
    assert refused.status_code == 401
    challenge = refused.headers["www-authenticate"]
    assert challenge.startswith("Bearer ") and 'scope="mcp:tools"' in challenge and "error=" not in challenge
    assert "lambda-mcp-challenge" not in refused.headers  # the HTTP API's mapping puts the copy in place
    metadata = httpx.get(_metadata_url(challenge))
    assert metadata.status_code == 200
    document = metadata.json()
    assert document["resource"] == server.url and document["authorization_servers"] == [issuer.url]
    assert document["bearer_methods_supported"] == ["header"] and "mcp:tools" in document["scopes_supported"]
    root = httpx.get(f"http://127.0.0.1:{server.port}/.well-known/oauth-protected-resource")
    assert root.json() == document
    copy = httpx.get(f"http://127.0.0.1:{server.port}/.well-known/oauth-authorization-server")
    assert copy.json() == issuer.metadata()  # for 2025-03-26 clients, on the server's own origin


def test_a_valid_token_works_on_both_eras(server: ServerProcess, issuer: LocalIssuer) -> None:
    token = _auth(issuer.token(server.url))
    listed = httpx.post(server.url, json=LIST, headers={**MODERN, **token})
    assert listed.status_code == 200 and listed.json()["result"]["tools"]
    started = httpx.post(server.url, json=INITIALIZE, headers={**LEGACY, **token})
    assert started.status_code == 200
    session = {"mcp-session-id": started.headers["mcp-session-id"], "mcp-protocol-version": "2025-11-25"}
    call = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "test_simple_text", "arguments": {}}}
    called = httpx.post(server.url, json=call, headers={**LEGACY, **session, **token})
    assert called.status_code == 200 and "simple text" in called.text


@pytest.mark.parametrize("era", ["2026-07-28", "2025-11-25"])
def test_every_bad_token_is_refused_with_a_challenge_and_never_5xx(
    server: ServerProcess, issuer: LocalIssuer, era: str
) -> None:
    body, headers = (LIST, MODERN) if era == "2026-07-28" else (INITIALIZE, LEGACY)
    tokens = bad_tokens(issuer, server.url)
    for case, token in tokens.items():
        refused = httpx.post(server.url, json=body, headers={**headers, **_auth(token)})
        assert refused.status_code == 401, (case, refused.status_code, refused.text)
        challenge = refused.headers["www-authenticate"]
        assert _metadata_url(challenge) == f"http://127.0.0.1:{server.port}/.well-known/oauth-protected-resource/mcp"
        assert ('error="invalid_token"' in challenge) == (token is not None), (case, challenge)
        assert refused.json()["error"]["message"].startswith("Unauthorized"), case
    lacking = httpx.post(server.url, json=body, headers={**headers, **_auth(issuer.token(server.url, scope="other"))})
    assert lacking.status_code == 403
    assert 'error="insufficient_scope"' in lacking.headers["www-authenticate"]
    assert 'scope="mcp:tools"' in lacking.headers["www-authenticate"]


def test_get_and_delete_need_a_token_too_and_keys_are_fetched_once(server: ServerProcess, issuer: LocalIssuer) -> None:
    for method in ("GET", "DELETE"):
        refused = httpx.request(
            method, server.url, headers={"mcp-session-id": "x", "mcp-protocol-version": "2025-11-25"}
        )
        assert refused.status_code == 401 and "resource_metadata=" in refused.headers["www-authenticate"]
    valid, unknown = issuer.token(server.url), issuer.token(server.url, key="foreign", kid="rotated-10")
    assert httpx.post(server.url, json=LIST, headers={**MODERN, **_auth(valid)}).status_code == 200
    assert httpx.post(server.url, json=LIST, headers={**MODERN, **_auth(unknown)}).status_code == 401
    # Across every invocation so far (unknown kids included): one JWKS fetch, cached in the warm
    # execution environment; an unknown kid refetches at most once a minute.
    assert issuer.jwks_fetches == 1


def _task_item(endpoint: str, table: str, task_id: str) -> dict[str, Any]:
    """The task's record as the table holds it (its JSON body), with the owner index's copy as `listing`."""
    import boto3

    from lambda_mcp.storage.dynamodb import keys

    client = boto3.client("dynamodb", endpoint_url=endpoint, region_name="us-east-1")
    key = {keys.PK: {"S": keys.task_pk(task_id)}, keys.SK: {"S": keys.TASK_SK}}
    item = client.get_item(TableName=table, Key=key, ConsistentRead=True)["Item"]
    return {**json.loads(item["body"]["S"]), "listing": item["listing"]["S"]}


def _answer(response: httpx.Response) -> Any:
    """The JSON-RPC response a POST got, as JSON or as the last event of an SSE stream."""
    assert response.status_code == 200, response.text
    if response.headers["content-type"].startswith("text/event-stream"):
        return [json.loads(line[5:]) for line in response.text.splitlines() if line.startswith("data:")][-1]
    return response.json()


@pytest.mark.parametrize("lambda_path", [True, False], ids=["lambda", "streaming"])
def test_tools_and_tasks_see_the_token_claims_on_both_eras(
    issuer: LocalIssuer, tmp_path: Path, lambda_path: bool, request: pytest.FixtureRequest
) -> None:
    """`ctx.claims`: through the Lambda handler with state in DynamoDB Local and the task run by the real
    worker handler (or by the streaming server), on the 2026 wire (inline and as a task) and a session."""
    endpoint = request.getfixturevalue("dynamodb_local_url") if lambda_path else None
    process = _serve(issuer, tmp_path, lambda_path=lambda_path, app=SCOPED, aws_endpoint=endpoint)
    try:
        token = _auth(issuer.token(process.url, email="ana@example.com", groups=["admins"]))
        seen = {"claims": {"sub": "alice", "email": "ana@example.com", "groups": ["admins"]}, "changed": False}

        def modern(method: str, params: dict[str, Any], name: str, capabilities: dict[str, Any]) -> Any:
            meta = {**LIST["params"]["_meta"], "io.modelcontextprotocol/clientCapabilities": capabilities}
            body = {"jsonrpc": "2.0", "id": 2, "method": method, "params": {**params, "_meta": meta}}
            headers = {**MODERN, "mcp-method": method, "mcp-name": name, **token}
            return _answer(httpx.post(process.url, json=body, headers=headers))["result"]

        inline = modern("tools/call", {"name": "claims", "arguments": {}}, "claims", {})
        assert json.loads(inline["content"][0]["text"]) == seen
        tasks = {"extensions": {"io.modelcontextprotocol/tasks": {}}}
        task_id = modern("tools/call", {"name": "claims", "arguments": {}}, "claims", tasks)["taskId"]

        def completed() -> Any:
            got = modern("tasks/get", {"taskId": task_id}, task_id, tasks)
            return got if got["status"] == "completed" else None

        done = wait_until(completed, what="the task to complete")
        assert json.loads(done["result"]["content"][0]["text"]) == seen
        if endpoint is not None:  # the run was the worker handler's, from the task's item in the table
            assert ran(process, task_id, "completed")
            stored = _task_item(endpoint, f"auth-{process.port}", task_id)
            assert {k: stored["claims"][k] for k in ("email", "groups")} == {
                "email": "ana@example.com",
                "groups": ["admins"],
            }
            assert json.loads(stored["listing"])["claims"] == {}  # the owner index's copy leaves them out

        started = httpx.post(process.url, json=INITIALIZE, headers={**LEGACY, **token})
        session = {"mcp-session-id": started.headers["mcp-session-id"], "mcp-protocol-version": "2025-11-25"}
        call = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "claims", "arguments": {}}}
        called = _answer(httpx.post(process.url, json=call, headers={**LEGACY, **session, **token}))
        assert json.loads(called["result"]["content"][0]["text"]) == seen
    finally:
        process.stop()


def test_a_session_made_with_one_principals_token_is_refused_to_another(
    server: ServerProcess, issuer: LocalIssuer
) -> None:
    alice = _auth(issuer.token(server.url, sub="alice"))
    started = httpx.post(server.url, json=INITIALIZE, headers={**LEGACY, **alice})
    session = {"mcp-session-id": started.headers["mcp-session-id"], "mcp-protocol-version": "2025-11-25"}
    ping = {"jsonrpc": "2.0", "id": 2, "method": "ping"}
    bob = _auth(issuer.token(server.url, sub="bob"))
    assert httpx.post(server.url, json=ping, headers={**LEGACY, **session, **bob}).status_code == 404
    other_issuer_alice = _auth(issuer.token(server.url, sub="alice", issuer=issuer.url + "/other"))
    assert httpx.post(server.url, json=ping, headers={**LEGACY, **session, **other_issuer_alice}).status_code == 401
    assert httpx.post(server.url, json=ping, headers={**LEGACY, **session, **alice}).status_code == 200
    assert httpx.delete(server.url, headers={**session, **bob}).status_code == 404


def test_the_rest_api_answers_for_the_function_with_its_gateway_responses(issuer: LocalIssuer, tmp_path: Path) -> None:
    process = _serve(issuer, tmp_path, api="rest")
    try:
        base = f"http://127.0.0.1:{process.port}/v1"
        refused = httpx.post(process.url, json=LIST, headers=MODERN)
        assert refused.status_code == 401 and refused.json() == {"message": "Unauthorized"}
        challenge = refused.headers["www-authenticate"]
        assert _metadata_url(challenge) == f"{base}/.well-known/oauth-protected-resource/mcp"
        assert httpx.get(_metadata_url(challenge)).json()["resource"] == process.url
        wrong = httpx.post(process.url, json=LIST, headers={**MODERN, **_auth(issuer.token("https://x/mcp"))})
        assert wrong.status_code == 401 and "resource_metadata=" in wrong.headers["www-authenticate"]
        lacking = httpx.post(process.url, json=LIST, headers={**MODERN, **_auth(issuer.token(process.url, scope="x"))})
        assert lacking.status_code == 403 and 'error="insufficient_scope"' in lacking.headers["www-authenticate"]
        listed = httpx.post(process.url, json=LIST, headers={**MODERN, **_auth(issuer.token(process.url))})
        assert listed.status_code == 200 and listed.json()["result"]["tools"]
        outside = httpx.get(f"http://127.0.0.1:{process.port}/.well-known/oauth-protected-resource/v1/mcp")
        assert outside.status_code == 403  # a REST API serves nothing outside its stage
    finally:
        process.stop()


def test_a_function_url_renames_the_challenge_and_clients_find_the_metadata_at_the_well_known_uri(
    issuer: LocalIssuer, tmp_path: Path
) -> None:
    process = _serve(issuer, tmp_path, api="url")
    try:
        refused = httpx.post(process.url, json=LIST, headers=MODERN)
        assert refused.status_code == 401 and "www-authenticate" not in refused.headers
        assert "resource_metadata=" in refused.headers["x-amzn-remapped-www-authenticate"]
        found = httpx.get(f"http://127.0.0.1:{process.port}/.well-known/oauth-protected-resource/mcp")
        assert found.json()["resource"] == process.url
    finally:
        process.stop()


def test_the_streaming_dev_server_checks_tokens_the_same_way(issuer: LocalIssuer, tmp_path: Path) -> None:
    process = _serve(issuer, tmp_path, lambda_path=False)
    try:
        refused = httpx.post(process.url, json=LIST, headers=MODERN)
        assert refused.status_code == 401 and "resource_metadata=" in refused.headers["www-authenticate"]
        expired = httpx.post(
            process.url, json=LIST, headers={**MODERN, **_auth(issuer.token(process.url, lifetime=-600))}
        )
        assert expired.status_code == 401 and 'error="invalid_token"' in expired.headers["www-authenticate"]
        listed = httpx.post(process.url, json=LIST, headers={**MODERN, **_auth(issuer.token(process.url))})
        assert listed.status_code == 200
    finally:
        process.stop()


# -- the review of issue 21: a down issuer, per-tool refusals behind REST and URL, gateway mode ------
def test_an_unreachable_issuer_is_a_503_with_retry_after_not_a_bad_token(issuer: LocalIssuer, tmp_path: Path) -> None:
    """Finding 4: every request waited 10-15 s for the issuer, then 503; the REST authorizer said 401."""
    down = f"http://127.0.0.1:{free_port()}"  # nothing listens there
    for api in ("rest", "url"):
        process = _serve(issuer, tmp_path, api=api, issuer_url=down)
        try:
            token = _auth(issuer.token(process.url))
            for attempt in range(2):
                started = time.monotonic()
                refused = httpx.post(process.url, json=LIST, headers={**MODERN, **token})
                assert refused.status_code == 503, (api, refused.text)
                assert int(refused.headers["retry-after"]) >= 1
                assert "invalid_token" not in refused.headers.get("www-authenticate", "")
                if attempt:  # remembered: the second request does not wait for the issuer again
                    assert time.monotonic() - started < 1.0
            metadata = httpx.get(process.url.removesuffix("/mcp") + "/.well-known/oauth-authorization-server")
            assert metadata.status_code == 503 and int(metadata.headers["retry-after"]) >= 1
        finally:
            process.stop()


@pytest.mark.parametrize("api", ["rest", "url"])
def test_a_per_tool_refusal_behind_a_renaming_front_door_still_carries_its_challenge(
    issuer: LocalIssuer, tmp_path: Path, api: str
) -> None:
    """Finding 11: behind REST and Function URLs the function's `WWW-Authenticate` is renamed; the challenge
    arrives in the error's data (and under the renamed header), naming the base scopes too."""
    process = _serve(issuer, tmp_path, api=api, app=SCOPED)
    try:
        call = {
            **LIST,
            "method": "tools/call",
            "params": {**LIST["params"], "name": "restock", "arguments": {"item": "x"}},
        }
        headers = {**MODERN, "mcp-method": "tools/call", "mcp-name": "restock", **_auth(issuer.token(process.url))}
        refused = httpx.post(process.url, json=call, headers=headers)
        assert refused.status_code == 403
        challenge = refused.json()["error"]["data"]["wwwAuthenticate"]
        assert 'error="insufficient_scope"' in challenge and 'scope="inventory:write mcp:tools"' in challenge
        assert refused.headers["x-amzn-remapped-www-authenticate"] == challenge
    finally:
        process.stop()


def test_gateway_mode_can_be_tried_locally_with_an_emulated_authorizer(tmp_path: Path) -> None:
    """Also seen: `dev --lambda` could not exercise auth `gateway` (every request got 401)."""
    claims = tmp_path / "claims.json"
    issued = {"iss": "https://issuer.example.com", "sub": "carol", "scope": "inventory:write", "groups": ["staff"]}
    claims.write_text(json.dumps(issued))
    carol = "https://issuer.example.com#carol"
    seen = {"sub": "carol", "groups": ["staff"]}
    cases = [
        ("http", ["--authorizer-claims", str(claims)], carol, ["inventory:write"], seen),
        # a REST API's Cognito authorizer passes every claim as a string
        ("rest", ["--authorizer-claims", str(claims)], carol, ["inventory:write"], {**seen, "groups": '["staff"]'}),
        ("url", ["--iam-caller", "arn:aws:iam::123456789012:user/ci"], "arn:aws:iam::123456789012:user/ci", [], {}),
    ]
    for api, options, principal, scopes, claimed in cases:
        port = free_port()
        path = "/v1/mcp" if api == "rest" else "/mcp"
        process = lambda_mcp_dev(SCOPED, through_lambda=True, port=port, path=path, extra_args=["--api", api, *options])
        try:
            for tool, expected in (
                ("whoami", {"principal": principal, "scopes": scopes}),
                ("claims", {"claims": claimed, "changed": False}),
            ):
                call = {**LIST, "method": "tools/call", "params": {**LIST["params"], "name": tool, "arguments": {}}}
                answered = httpx.post(
                    process.url, json=call, headers={**MODERN, "mcp-method": "tools/call", "mcp-name": tool}
                )
                assert answered.status_code == 200, (api, answered.text)
                assert json.loads(answered.json()["result"]["content"][0]["text"]) == expected, (api, tool)
        finally:
            process.stop()
    plain = lambda_mcp_dev(SCOPED, through_lambda=True, env={"LAMBDA_MCP_AUTH": "gateway"})
    try:
        assert httpx.post(plain.url, json=LIST, headers=MODERN).status_code == 401  # no authorizer: fail closed
    finally:
        plain.stop()
