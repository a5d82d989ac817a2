"""Interop tests: the official MCP Python SDK client against ``lambda-mcp dev`` in both protocol eras.

Each server mode (``dev`` and ``dev --lambda``) runs the conformance fixture server
(``examples/conformance/server.py``) once per module as a subprocess on 127.0.0.1, and the
SDK's ``mcp.Client`` connects to it in every negotiation mode it offers:

* ``auto``: ``server/discover`` probe, falling back to ``initialize``;
* ``legacy``: the ``initialize`` handshake (2025-era session, server-to-client requests);
* ``2026-07-28``: the version pinned, no negotiation traffic (per-request envelope).

The tests assert real fixture behaviour for list/call/read/get, the negotiated protocol
version, sampling and elicitation (pushed over the session in legacy mode, returned as an
``InputRequiredResult`` and retried transparently by the client in 2026-07-28 mode).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import anyio
import pytest
from mcp import Client, types
from mcp.client import ClientRequestContext
from mcp.types.version import HANDSHAKE_PROTOCOL_VERSIONS

from tests.support.processes import ServerProcess, lambda_mcp_dev

pytestmark = pytest.mark.anyio

FIXTURE_SERVER = "examples/conformance/server.py"
MODERN_VERSION = "2026-07-28"

SERVER_MODES: dict[str, tuple[str, ...]] = {"dev": (), "dev --lambda": ("--lambda",)}
CLIENT_MODES: tuple[str, ...] = ("auto", "legacy", MODERN_VERSION)

INTERACTION_TIMEOUT_SECONDS = 30.0
REQUEST_TIMEOUT_SECONDS = 20.0
"""Per-request read timeout: a hung request fails as an MCPError before the outer deadline."""

SIMPLE_TEXT = "This is a simple text response for testing."
STATIC_RESOURCE_URI = "test://static-text"
STATIC_RESOURCE_TEXT = "This is the content of the static text resource."
SAMPLED_TEXT = "Sampled reply from the interop test"
SAMPLING_PROMPT = "Say something for the interop test"
ELICITATION_PRESETS: dict[str, str] = {"username": "u", "email": "e@x.io"}

_T = TypeVar("_T")


def _server_id(server_mode: str) -> str:
    return server_mode.replace(" --", "-").replace(" ", "-")


ALL_COMBINATIONS = [
    pytest.param(server_mode, client_mode, id=f"{_server_id(server_mode)}-{client_mode}")
    for server_mode in SERVER_MODES
    for client_mode in CLIENT_MODES
]

# Server-to-client requests pushed over a legacy session (sampling/createMessage,
# elicitation/create): on `dev` the call waits on its open stream for the client's answer; on
# `dev --lambda` (and `--aws local`, state in DynamoDB Local) the buffered response ends with the
# request, the client's answer POST and its GET with Last-Event-ID land in later invocations, and
# the call is re-run with the recorded answer. In 2026-07-28 mode the same tools return an
# InputRequiredResult (MRTR), which the client resolves through the same callbacks and retries.
SERVER_TO_CLIENT_COMBINATIONS = [
    pytest.param("dev", "legacy", id="dev-legacy"),
    pytest.param("dev", MODERN_VERSION, id=f"dev-{MODERN_VERSION}"),
    pytest.param("dev --lambda", "legacy", id="dev-lambda-legacy"),
    pytest.param("dev --lambda", MODERN_VERSION, id=f"dev-lambda-{MODERN_VERSION}"),
    pytest.param("dev --lambda --aws local", "legacy", id="dev-lambda-aws-local-legacy"),
]


# --------------------------------------------------------------------------- server processes


class _ServerPool:
    """Starts each server mode on first use and keeps it for the rest of the module."""

    def __init__(self, log_dir: Path) -> None:
        self._log_dir = log_dir
        self._servers: dict[str, ServerProcess] = {}
        self._startup_failures: dict[str, str] = {}
        self.violations = log_dir / "schema-violations.txt"
        """Every message the servers send is checked against its revision's schema into this file."""
        self.violations.touch()

    def get(self, server_mode: str) -> ServerProcess:
        if server_mode in self._startup_failures:
            pytest.fail(f"(startup failed earlier) {self._startup_failures[server_mode]}")
        server = self._servers.get(server_mode)
        if server is None:
            log = self._log_dir / f"{_server_id(server_mode)}.log"
            try:
                server = lambda_mcp_dev(
                    FIXTURE_SERVER,
                    through_lambda=server_mode.startswith("dev --lambda"),
                    validate_into=self.violations,
                    log=log,
                    aws_data_dir=self._log_dir / "ddb" if server_mode.endswith("--aws local") else None,
                )
            except RuntimeError as error:
                self._startup_failures[server_mode] = f"{error}\n{log.read_text(errors='replace')[-4000:]}"
                pytest.fail(self._startup_failures[server_mode])
            if server_mode.endswith("--aws local") and "on dynamodb-local" not in server.output():
                server.stop()  # never a silent fallback to moto: this mode is about DynamoDB Local
                pytest.fail(f"--aws local did not start DynamoDB Local:\n{server.output()}")
            self._servers[server_mode] = server
        _fail_if_dead(server)
        return server

    def close(self) -> None:
        for server in self._servers.values():
            server.stop()
        self._servers.clear()


def _fail_if_dead(server: ServerProcess) -> None:
    if server.process.poll() is not None:
        pytest.fail(f"server died (exit {server.process.returncode})\n{server.output()}")


@pytest.fixture(scope="module")
def servers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[_ServerPool]:
    pool = _ServerPool(tmp_path_factory.mktemp("interop-servers"))
    try:
        yield pool
    finally:
        pool.close()
    problems = pool.violations.read_text().splitlines()
    assert not problems, "schema violations in messages sent to the SDK client:\n" + "\n".join(problems[:20])


# --------------------------------------------------------------------------- client helpers


def _leaves(exc: BaseException) -> list[BaseException]:
    if isinstance(exc, BaseExceptionGroup):
        return [leaf for sub in exc.exceptions for leaf in _leaves(sub)]
    return [exc]


async def _with_client(
    server: ServerProcess,
    mode: str,
    action: Callable[[Client], Awaitable[_T]],
    **client_options: Any,
) -> _T:
    """Connect ``Client(url, mode=...)``, run ``action`` on it, close it; bounded in time.

    Failures escaping the client's task groups arrive wrapped in exception groups; a lone
    leaf is re-raised as itself so the test reports the real error.
    """
    try:
        with anyio.fail_after(INTERACTION_TIMEOUT_SECONDS):
            async with Client(
                server.url,
                mode=mode,
                read_timeout_seconds=REQUEST_TIMEOUT_SECONDS,
                **client_options,
            ) as client:
                return await action(client)
    except BaseExceptionGroup as group:
        leaves = _leaves(group)
        if len(leaves) == 1:
            raise leaves[0] from None
        raise
    finally:
        _fail_if_dead(server)


def _texts(blocks: Sequence[object]) -> list[str]:
    return [block.text for block in blocks if isinstance(block, types.TextContent)]


@dataclass
class _Negotiation:
    protocol_version: str
    discovered: bool
    initialized: bool
    server_info: types.Implementation | None


async def _negotiation(client: Client) -> _Negotiation:
    return _Negotiation(
        protocol_version=client.protocol_version,
        discovered=client.session.discover_result is not None,
        initialized=client.session.initialize_result is not None,
        server_info=client.server_info,
    )


# --------------------------------------------------------------------------- list/call/read/get


@pytest.mark.parametrize(("server_mode", "client_mode"), ALL_COMBINATIONS)
async def test_negotiated_protocol_version(servers: _ServerPool, server_mode: str, client_mode: str) -> None:
    negotiation = await _with_client(servers.get(server_mode), client_mode, _negotiation)

    if client_mode == "legacy":
        assert negotiation.protocol_version in HANDSHAKE_PROTOCOL_VERSIONS, negotiation
        assert negotiation.initialized, negotiation
        assert negotiation.server_info is not None, "InitializeResult.serverInfo is required"
    elif client_mode == "auto":
        # The kit speaks 2026-07-28, so the server/discover probe must succeed (no fallback).
        assert negotiation.protocol_version == MODERN_VERSION, negotiation
        assert negotiation.discovered, negotiation
    else:
        assert negotiation.protocol_version == MODERN_VERSION, negotiation
        assert not negotiation.initialized, negotiation


@pytest.mark.parametrize(("server_mode", "client_mode"), ALL_COMBINATIONS)
async def test_list_tools(servers: _ServerPool, server_mode: str, client_mode: str) -> None:
    result = await _with_client(servers.get(server_mode), client_mode, lambda client: client.list_tools())

    names = {tool.name for tool in result.tools}
    assert {"test_simple_text", "test_error_handling"} <= names, sorted(names)


@pytest.mark.parametrize(("server_mode", "client_mode"), ALL_COMBINATIONS)
async def test_call_simple_text(servers: _ServerPool, server_mode: str, client_mode: str) -> None:
    result = await _with_client(
        servers.get(server_mode),
        client_mode,
        lambda client: client.call_tool("test_simple_text"),
    )

    assert not result.is_error, result.model_dump_json()
    assert SIMPLE_TEXT in _texts(result.content), result.model_dump_json()


@pytest.mark.parametrize(("server_mode", "client_mode"), ALL_COMBINATIONS)
async def test_call_error_handling(servers: _ServerPool, server_mode: str, client_mode: str) -> None:
    result = await _with_client(
        servers.get(server_mode),
        client_mode,
        lambda client: client.call_tool("test_error_handling"),
    )

    assert result.is_error is True, result.model_dump_json()


@pytest.mark.parametrize(("server_mode", "client_mode"), ALL_COMBINATIONS)
async def test_list_resources(servers: _ServerPool, server_mode: str, client_mode: str) -> None:
    result = await _with_client(servers.get(server_mode), client_mode, lambda client: client.list_resources())

    uris = [str(resource.uri) for resource in result.resources]
    assert STATIC_RESOURCE_URI in uris, uris


@pytest.mark.parametrize(("server_mode", "client_mode"), ALL_COMBINATIONS)
async def test_read_resource(servers: _ServerPool, server_mode: str, client_mode: str) -> None:
    result = await _with_client(
        servers.get(server_mode),
        client_mode,
        lambda client: client.read_resource(STATIC_RESOURCE_URI),
    )

    texts = [content.text for content in result.contents if isinstance(content, types.TextResourceContents)]
    assert texts == [STATIC_RESOURCE_TEXT], result.model_dump_json()


@pytest.mark.parametrize(("server_mode", "client_mode"), ALL_COMBINATIONS)
async def test_list_prompts(servers: _ServerPool, server_mode: str, client_mode: str) -> None:
    result = await _with_client(servers.get(server_mode), client_mode, lambda client: client.list_prompts())

    names = {prompt.name for prompt in result.prompts}
    assert "test_simple_prompt" in names, sorted(names)


@pytest.mark.parametrize(("server_mode", "client_mode"), ALL_COMBINATIONS)
async def test_get_prompt_with_arguments(servers: _ServerPool, server_mode: str, client_mode: str) -> None:
    result = await _with_client(
        servers.get(server_mode),
        client_mode,
        lambda client: client.get_prompt("test_prompt_with_arguments", {"arg1": "x1", "arg2": "y2"}),
    )

    text = "\n".join(_texts([message.content for message in result.messages]))
    assert "x1" in text and "y2" in text, result.model_dump_json()


# --------------------------------------------------------------------------- sampling/elicitation


@dataclass
class _SamplingRecorder:
    """Sampling callback answering every request with ``SAMPLED_TEXT``; remembers the prompts."""

    prompts: list[str]

    async def __call__(
        self, context: ClientRequestContext, params: types.CreateMessageRequestParams
    ) -> types.CreateMessageResult:
        for message in params.messages:
            content = message.content
            blocks = content if isinstance(content, list) else [content]
            self.prompts.extend(_texts(blocks))
        return types.CreateMessageResult(
            role="assistant",
            content=types.TextContent(type="text", text=SAMPLED_TEXT),
            model="interop-test-model",
            stop_reason="endTurn",
        )


def _elicited_value(name: str, schema: object) -> str | int | float | bool | None:
    """A fixed answer for one requested property: the presets by name, else one per JSON type."""
    if name in ELICITATION_PRESETS:
        return ELICITATION_PRESETS[name]
    kind = schema.get("type") if isinstance(schema, dict) else None
    if kind == "integer":
        return 7
    if kind == "number":
        return 7.5
    if kind == "boolean":
        return True
    if kind == "string" or kind is None:
        enum = schema.get("enum") if isinstance(schema, dict) else None
        if isinstance(enum, list) and enum and isinstance(enum[0], str):
            return enum[0]
        return f"{name}-value"
    return None


@dataclass
class _ElicitationRecorder:
    """Elicitation callback accepting every form with values for each requested property."""

    answers: list[dict[str, str | int | float | bool | list[str] | None]]

    async def __call__(self, context: ClientRequestContext, params: types.ElicitRequestParams) -> types.ElicitResult:
        if not isinstance(params, types.ElicitRequestFormParams):
            return types.ElicitResult(action="decline")
        properties = params.requested_schema.get("properties") or {}
        content: dict[str, str | int | float | bool | list[str] | None] = {}
        for name, schema in properties.items():
            value = _elicited_value(name, schema)
            if value is not None:
                content[name] = value
        if not content:
            content = dict(ELICITATION_PRESETS)
        self.answers.append(content)
        return types.ElicitResult(action="accept", content=content)


@pytest.mark.parametrize(("server_mode", "client_mode"), SERVER_TO_CLIENT_COMBINATIONS)
async def test_sampling(servers: _ServerPool, server_mode: str, client_mode: str) -> None:
    sampler = _SamplingRecorder(prompts=[])

    result = await _with_client(
        servers.get(server_mode),
        client_mode,
        lambda client: client.call_tool("test_sampling", {"prompt": SAMPLING_PROMPT}),
        sampling_callback=sampler,
    )

    assert sampler.prompts, "the sampling callback was never invoked"
    assert any(SAMPLING_PROMPT in prompt for prompt in sampler.prompts), sampler.prompts
    assert not result.is_error, result.model_dump_json()
    assert any(SAMPLED_TEXT in text for text in _texts(result.content)), result.model_dump_json()


@pytest.mark.parametrize(("server_mode", "client_mode"), SERVER_TO_CLIENT_COMBINATIONS)
async def test_elicitation(servers: _ServerPool, server_mode: str, client_mode: str) -> None:
    elicitor = _ElicitationRecorder(answers=[])

    result = await _with_client(
        servers.get(server_mode),
        client_mode,
        lambda client: client.call_tool("test_elicitation", {"message": "Who is running the interop test?"}),
        elicitation_callback=elicitor,
    )

    assert elicitor.answers, "the elicitation callback was never invoked"
    assert not result.is_error, result.model_dump_json()
    text = "\n".join(_texts(result.content))
    assert "accept" in text, result.model_dump_json()
    sent = [value for answer in elicitor.answers for value in answer.values() if isinstance(value, str)]
    assert any(value in text for value in sent), (sent, result.model_dump_json())
