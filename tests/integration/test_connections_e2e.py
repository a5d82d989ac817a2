"""Connections (tools that call another service as the user) end to end: the official Python SDK client and a
browser-like user, through `lambda-mcp dev tests/apps/connected.py --lambda` with `LAMBDA_MCP_AUTH=proxy` in
front of a real upstream identity provider (npm `oidc-provider`, tests/support/upstream.py), and the stand-in
third-party provider of tests/support/oauth_provider.py on loopback (its client `mcp-app` registered with
the facade's `/oauth/connections/demo/callback`), on both eras.

Each user is a browser (one cookie jar) and an SDK client whose OAuth sign-in that browser walks (facade
consent, upstream login). A tool that needs the `demo` connection asks for a URL elicitation: on
2026-07-28 the SDK's elicitation callback gets it (mode `url`), on 2025-11-25 the call fails with -32042
(`UrlElicitationRequiredError`). The browser follows its URL: the facade's start link redirects to the
provider's consent, whose answer the browser takes back to the facade's callback; the retried call shows
the provider's data for that user's token. Then: a second call asks nothing, another user gets their own,
an expired token is refreshed silently, `forget_demo` asks again, a task goes `input_required` then
`completed`, another user's link connects nothing (403), and no provider token is in anything the SDK
read or in the dev server's log.

The SDK has no client side of tasks. On 2026-07-28 `TasksExtension` below adds one with the SDK's own
extension hooks: it claims the `task` result and drives it with `tasks/get` and `tasks/update`, answering
the task's input requests through the same elicitation callback. On 2025-11-25 the SDK's typed `tasks/get`
and `tasks/result` work (the task's elicitation arrives on the `tasks/result` stream and goes to the
callback), but the SDK checks every `tools/call` answer as a `CallToolResult`, so the one request that
creates the task is raw JSON-RPC on the SDK's session, with its token.

One dev server per front door (`--api http`, `--api rest`), one at a time, and one upstream serve the module;
`ctx.upstream_token()`'s refresh has its own pair, started once: an upstream whose access tokens live
`BRIEF_ACCESS` seconds and a dev server (`--api http`) in front of it.
"""

from __future__ import annotations

import html
import json
import re
import time
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any, Literal
from urllib.parse import urljoin

import anyio
import httpx
import httpx2
import mcp_types as types
import pytest
from mcp import Client, UrlElicitationRequiredError
from mcp.client.auth import OAuthClientProvider
from mcp.client.extension import ClaimContext, ClientExtension, ResultClaim
from mcp.client.session import ClientRequestContext
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.auth import OAuthClientMetadata
from mcp.shared.exceptions import MCPError
from pydantic import AnyUrl, TypeAdapter

from tests.support.facade_clients import HeadlessUser, MemoryTokens, loopback_redirect_uri
from tests.support.oauth_provider import OAuthProvider
from tests.support.processes import ServerProcess, free_port, lambda_mcp_dev
from tests.support.upstream import Upstream, sign_in, start_upstream, upstream_for_ports

pytestmark = pytest.mark.anyio
APP = "tests/apps/connected.py"
APIS = ("http", "rest")
PATHS = {"http": "/mcp", "rest": "/v1/mcp"}
ERAS = ("2026-07-28", "2025-11-25")
TASKS = "io.modelcontextprotocol/tasks"
LIVES = 2
"""How long a fresh provider access token is good for, as the facade's vault sees it: it refreshes a token
half its lifetime before its expiry when that is less than `EARLY_SECONDS`, so the provider issues tokens of
`2 * LIVES` seconds."""
BRIEF_ACCESS = 4
"""How long the brief upstream's access tokens live: `upstream_token()` keeps one until half its life (less
than `EARLY_SECONDS`) before it expires, so `BRIEF_ACCESS / 2` seconds after the refresh."""


# -- the processes: the stand-in provider, the upstream, one dev server ------------------------------------------
@pytest.fixture(scope="module")
def ports() -> dict[str, int]:
    return {api: free_port() for api in APIS}


@pytest.fixture(scope="module")
def provider(ports: dict[str, int]) -> Iterator[OAuthProvider]:
    callbacks = [
        f"http://127.0.0.1:{port}{prefix}/oauth/connections/demo/callback"
        for port in ports.values()
        for prefix in ("", "/v1")
    ]
    with OAuthProvider({"mcp-app": ("demo-secret", callbacks)}) as started:
        yield started


@pytest.fixture(scope="module")
def upstream(ports: dict[str, int], tmp_path_factory: pytest.TempPathFactory) -> Iterator[Upstream]:
    yield from upstream_for_ports(ports, tmp_path_factory.mktemp("upstream") / "oidc.log")


@pytest.fixture(scope="module", params=APIS)
def server(
    request: pytest.FixtureRequest,
    ports: dict[str, int],
    upstream: Upstream,
    provider: OAuthProvider,
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[ServerProcess]:
    api: str = request.param
    port, path = ports[api], PATHS[api]
    env = {
        "LAMBDA_MCP_AUTH": "proxy",
        "LAMBDA_MCP_AUTH_AUDIENCE": f"http://127.0.0.1:{port}{path}",
        "LAMBDA_MCP_AUTH_SCOPES": "mcp:tools",
        "LAMBDA_MCP_TEST_PROVIDER": provider.url,
        **upstream.facade_env(),
    }
    log = tmp_path_factory.mktemp(f"connections-{api}") / "server.log"
    process = lambda_mcp_dev(
        APP, through_lambda=True, env=env, port=port, path=path, log=log, extra_args=["--api", api]
    )
    yield process
    process.stop()


@pytest.fixture(scope="module")
def brief_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    """`--api http` in front of an upstream whose access tokens live `BRIEF_ACCESS` seconds."""
    tmp, port = tmp_path_factory.mktemp("brief-upstream"), free_port()
    brief = start_upstream(
        tmp / "oidc.log",
        [f"http://127.0.0.1:{port}/oauth/callback"],
        env={"UPSTREAM_ACCESS_TTL": str(BRIEF_ACCESS)},
    )
    env = {
        "LAMBDA_MCP_AUTH": "proxy",
        "LAMBDA_MCP_AUTH_AUDIENCE": f"http://127.0.0.1:{port}/mcp",
        "LAMBDA_MCP_AUTH_SCOPES": "mcp:tools",
        **brief.facade_env(),
    }
    try:
        process = lambda_mcp_dev(
            APP, through_lambda=True, env=env, port=port, log=tmp / "server.log", extra_args=["--api", "http"]
        )
    except BaseException:
        brief.stop()
        raise
    yield process
    process.stop()
    brief.stop()


# -- a person: their browser, and the SDK client they sign in with -----------------------------------------------
@dataclass
class Person:
    """A user's browser: one cookie jar for the facade, the upstream and the provider."""

    name: str
    provider: OAuthProvider
    browser: httpx.Client = field(
        default_factory=lambda: httpx.Client(follow_redirects=False, timeout=15, trust_env=False)
    )

    def connect(self, url: str) -> httpx.Response:
        """Follow a connection link as this browser: the facade sends it to the provider's consent (this
        browser signed in through the facade as this user), and the provider back to the facade."""
        start = self.browser.get(url)
        assert start.status_code == 302, start.text
        location = start.headers["location"]
        assert location.startswith(self.provider.authorize_endpoint + "?"), location
        return self.browser.get(self.provider.authorize_as(location, self.name))

    def open_as_another(self, url: str) -> httpx.Response:
        """Follow someone else's connection link in this browser: the facade has this user sign in again
        at the upstream (`prompt=login`); the page it ends with."""
        response = self.browser.get(url)
        for _ in range(12):
            if response.is_redirect:
                location = urljoin(str(response.url), response.headers["location"])
                assert not location.startswith(self.provider.url), f"sent on to the provider: {location}"
                response = self.browser.get(location)
            elif response.status_code == 200 and 'name="prompt" value="login"' in response.text:
                form = re.search(r'<form[^>]*action="([^"]+)"', response.text)
                assert form, response.text
                action = urljoin(str(response.url), html.unescape(form.group(1)))
                login = {"prompt": "login", "login": self.name, "password": "any"}
                response = self.browser.post(action, data=login)
            else:
                return response
        raise AssertionError(f"no end to the walk from {url}")


class RecordingTransport(httpx2.AsyncBaseTransport):
    """The SDK's HTTP transport, keeping every response body as the SDK reads it (streams included)."""

    def __init__(self) -> None:
        self.inner = httpx2.AsyncHTTPTransport(trust_env=False)
        self.bodies: list[bytearray] = []
        self.session_id: str | None = None
        """The 2025-11-25 session the server started (`Mcp-Session-Id` of the initialize answer)."""

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        response = await self.inner.handle_async_request(request)
        self.session_id = self.session_id or response.headers.get("mcp-session-id")
        body = bytearray()
        self.bodies.append(body)
        response.stream = _Tee(response.stream, body)  # type: ignore[arg-type]
        return response

    async def aclose(self) -> None:
        await self.inner.aclose()


class _Tee(httpx2.AsyncByteStream):
    def __init__(self, inner: Any, into: bytearray) -> None:
        self.inner, self.into = inner, into

    async def __aiter__(self) -> AsyncIterator[bytes]:
        async for chunk in self.inner:
            self.into.extend(chunk)
            yield chunk

    async def aclose(self) -> None:
        await self.inner.aclose()


class CreatedTask(types.Result):
    result_type: Literal["task"]
    task_id: str
    status: str


class _TaskRequest(types.Request[dict[str, Any], str]):
    name_param = "taskId"


_ANY = TypeAdapter(dict[str, Any])
_INPUT_REQUEST: TypeAdapter[Any] = TypeAdapter(types.InputRequest)


class TasksExtension(ClientExtension):
    """The client side of the tasks extension (2026-07-28), which the SDK does not have: a `task` result is
    polled with `tasks/get`; its input requests go to the client's own callbacks and their answers back
    with `tasks/update`; the completed task's result is the call's."""

    identifier = TASKS

    def __init__(self) -> None:
        self.runs: list[list[str]] = []
        """The statuses each task went through, as the client saw them."""

    def claims(self) -> Sequence[ResultClaim[Any]]:
        return [ResultClaim(result_type="task", model=CreatedTask, resolve=self.resolve)]

    async def resolve(self, created: CreatedTask, ctx: ClaimContext) -> types.CallToolResult:
        session, task_id, statuses = ctx.session, created.task_id, [created.status]
        self.runs.append(statuses)
        with anyio.fail_after(20):
            while True:
                get = _TaskRequest(method="tasks/get", params={"taskId": task_id})
                task = await session.send_request(get, _ANY)  # type: ignore[arg-type]
                if task["status"] != statuses[-1]:
                    statuses.append(task["status"])
                if task["status"] == "completed":
                    return types.CallToolResult.model_validate(task["result"])
                assert task["status"] in ("working", "input_required"), task
                if task["status"] == "input_required":
                    answers = {}
                    for key, asked in task["inputRequests"].items():
                        context = ClientRequestContext(session=session, request_id=key)
                        answer = await session.dispatch_input_request(context, _INPUT_REQUEST.validate_python(asked))
                        answers[key] = answer.model_dump(by_alias=True, mode="json", exclude_none=True)
                    update = {"taskId": task_id, "inputResponses": answers}
                    await session.send_request(_TaskRequest(method="tasks/update", params=update), _ANY)  # type: ignore[arg-type]
                await anyio.sleep(0.1)


@dataclass
class Answer:
    text: str
    asked: list[str]
    """The URLs of the elicitations this call asked for (each followed in the browser, then accepted)."""
    is_error: bool = False


@dataclass
class User:
    """One person's SDK client on one era (`Client` over Streamable HTTP, OAuth through the facade)."""

    person: Person
    era: str
    client: Client
    transport: RecordingTransport
    tasks: TasksExtension
    storage: MemoryTokens
    url: str
    elicitations: list[types.ElicitRequestURLParams] = field(default_factory=list)
    answer_with: str = "follow"
    """What the elicitation callback does: `follow` the URL in the browser and accept; or `decline`."""

    async def elicit(self, context: ClientRequestContext, params: types.ElicitRequestParams) -> types.ElicitResult:
        assert isinstance(params, types.ElicitRequestURLParams) and params.mode == "url", params
        self.elicitations.append(params)
        if self.answer_with == "decline":
            return types.ElicitResult(action="decline")
        page = await anyio.to_thread.run_sync(self.person.connect, params.url)
        assert page.status_code == 200 and "You can close this window" in page.text, page.text
        return types.ElicitResult(action="accept")

    async def call_task(self, tool: str) -> Answer:
        """Call `tool` as a task. On 2026-07-28 `TasksExtension` drives it. On 2025-11-25 the SDK's typed
        requests do, but for the first: `tasks/get` until it stops working, then `tasks/result`, whose stream
        carries the task's elicitation to the SDK's callback (which answers it). The SDK checks any
        `tools/call` answer as a `CallToolResult`, so it cannot create a task: `create_task` does, raw."""
        if self.era != "2025-11-25":
            return await self.call(tool)
        session, before = self.client.session, len(self.elicitations)
        created = types.CreateTaskResult.model_validate(await self.create_task(tool))
        task_id, statuses = created.task.task_id, [created.task.status]
        self.tasks.runs.append(statuses)

        async def status() -> str:
            get = types.GetTaskRequest(params=types.GetTaskRequestParams(task_id=task_id))
            got = await session.send_request(get, types.GetTaskResult)
            if got.status != statuses[-1]:
                statuses.append(got.status)
            return got.status

        with anyio.fail_after(10):
            while await status() == "working":
                await anyio.sleep(0.05)
            payload = types.GetTaskPayloadRequest(params=types.GetTaskPayloadRequestParams(task_id=task_id))
            result = await session.send_request(payload, types.CallToolResult)
            await status()
        (content,) = result.content
        assert isinstance(content, types.TextContent), content
        return Answer(content.text, [params.url for params in self.elicitations[before:]], bool(result.is_error))

    async def create_task(self, tool: str) -> dict[str, Any]:
        """`tools/call` with `task` on the SDK's 2025-11-25 session, as raw JSON-RPC with its token."""
        session_id = self.transport.session_id
        assert self.storage.tokens is not None and session_id is not None
        headers = {
            "authorization": f"Bearer {self.storage.tokens.access_token}",
            "mcp-session-id": session_id,
            "mcp-protocol-version": self.era,
            "accept": "application/json, text/event-stream",
        }
        message = {"jsonrpc": "2.0", "id": "create", "method": "tools/call"}
        message["params"] = {"name": tool, "arguments": {}, "task": {}}
        async with httpx.AsyncClient(timeout=15, trust_env=False) as http:
            response = await http.post(self.url, json=message, headers=headers)
        assert response.status_code == 200, response.text
        self.transport.bodies.append(bytearray(response.content))
        text = response.text
        if text.lstrip().startswith(("event:", "data:", "id:", "retry:")):
            text = [line[5:].strip() for line in text.splitlines() if line.startswith("data:")][-1]
        answer: dict[str, Any] = json.loads(text)["result"]
        return answer

    async def call(self, tool: str) -> Answer:
        """Call `tool`; a URL elicitation is followed in the browser: on 2026-07-28 the SDK's callback does it
        (the SDK retries), on 2025-11-25 the -32042 error names it and the call is retried once done."""
        before = len(self.elicitations)
        try:
            result = await self.client.call_tool(tool, {})
            legacy_asked: list[str] = []
        except MCPError as error:
            assert self.era == "2025-11-25" and error.code == -32042, error
            required = UrlElicitationRequiredError.from_error(error.error)
            (elicitation,) = required.elicitations
            assert elicitation.mode == "url" and elicitation.elicitation_id
            self.elicitations.append(elicitation)
            page = await anyio.to_thread.run_sync(self.person.connect, elicitation.url)
            assert page.status_code == 200 and "You can close this window" in page.text, page.text
            legacy_asked = [elicitation.url]
            result = await self.client.call_tool(tool, {})
        asked = [params.url for params in self.elicitations[before:]]
        if self.era == "2025-11-25":
            assert asked == legacy_asked
        (content,) = result.content
        assert isinstance(content, types.TextContent), content
        return Answer(content.text, asked, bool(result.is_error))


@asynccontextmanager
async def signed_in(server: ServerProcess, person: Person, era: str) -> AsyncIterator[User]:
    """`person`'s SDK client on `era`, signed in through the facade (DCR, consent and the upstream's login
    walked in `person`'s browser, so its cookies name them there)."""
    redirect_uri = loopback_redirect_uri()
    headless, storage = HeadlessUser(redirect_uri, person.name), MemoryTokens()

    async def redirect(url: str) -> None:
        walked = await anyio.to_thread.run_sync(
            lambda: sign_in(url, redirect_uri=redirect_uri, user=person.name, browser=person.browser)
        )
        headless.sign_ins.append(walked)

    oauth = OAuthClientProvider(
        server_url=server.url,
        client_metadata=OAuthClientMetadata(
            client_name=f"connections e2e {person.name}",
            redirect_uris=[AnyUrl(redirect_uri)],
            token_endpoint_auth_method="none",
        ),
        storage=storage,
        redirect_handler=redirect,
        callback_handler=headless.answer,
    )
    transport, tasks = RecordingTransport(), TasksExtension()
    holder: list[User] = []

    async def elicit(context: ClientRequestContext, params: types.ElicitRequestParams) -> types.ElicitResult:
        return await holder[0].elicit(context, params)

    mode = "legacy" if era == "2025-11-25" else era
    with anyio.fail_after(60):
        async with (
            httpx2.AsyncClient(auth=oauth, timeout=20, transport=transport) as http,
            Client(
                streamable_http_client(server.url, http_client=http),
                mode=mode,
                elicitation_callback=elicit,
                extensions=[tasks] if era != "2025-11-25" else None,
            ) as client,
        ):
            assert client.protocol_version == era
            holder.append(User(person, era, client, transport, tasks, storage, server.url))
            yield holder[0]


def issued_tokens(provider: OAuthProvider) -> set[str]:
    """Every access and refresh token the provider has issued (valid, expired or rotated out)."""
    with provider._lock:  # the stand-in's own records: tests see what it issued, not just what is valid now
        return set(provider._access) | set(provider._refresh) | set(provider._retired)


def check_no_token_in(bodies: list[bytearray], provider: OAuthProvider) -> None:
    tokens = issued_tokens(provider)
    assert tokens
    seen = b"\n".join(bytes(body) for body in bodies)
    assert b"repos of" in seen, "the recording holds no tool answer"
    leaked = [token for token in tokens if token.encode() in seen]
    assert not leaked, "a provider token reached the client"


@pytest.fixture
def people(server: ServerProcess, provider: OAuthProvider) -> Iterator[Callable[[str, str], Person]]:
    """New people for one test, named for the era and the front door too (the provider is the module's);
    their browsers are closed after it."""
    api = "rest" if server.url.endswith("/v1/mcp") else "http"
    made: list[Person] = []

    def person(name: str, era: str) -> Person:
        made.append(Person(f"{name}-{era[:4]}-{api}", provider))
        return made[-1]

    yield person
    for each in made:
        each.browser.close()


# -- the tests -------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("era", ERAS)
async def test_a_user_connects_once_refreshes_silently_and_asks_again_after_forgetting(
    server: ServerProcess, provider: OAuthProvider, people: Callable[[str, str], Person], era: str
) -> None:
    provider.access_seconds = 2 * LIVES
    alice, bob = people("alice", era), people("bob", era)
    async with signed_in(server, alice, era) as user:
        first = await user.call("my_data")
        connected = time.monotonic()
        assert first.text == f"repos of {alice.name}" and not first.is_error
        (url,) = first.asked
        assert url.startswith(server.url.rsplit("/mcp", 1)[0] + "/oauth/connections/demo/start?s=")
        assert alice.name not in url  # the link names no one: its state is sealed
        authorize = provider.authorize_requests[-1]
        assert authorize["login"] == alice.name and authorize["code_challenge_method"] == "S256"
        assert authorize["redirect_uri"] == url.split("/start?", 1)[0] + "/callback"
        assert provider.code_exchanges[alice.name] == 1 and provider.refreshes[alice.name] == 0

        second = await user.call("my_data")  # the token is kept: nothing asked, nothing refreshed
        assert second == Answer(f"repos of {alice.name}", [])
        assert provider.refreshes[alice.name] == 0

        async with signed_in(server, bob, era) as other:  # another user: their own question, their own data
            theirs = await other.call("my_data")
            assert theirs.text == f"repos of {bob.name}" and len(theirs.asked) == 1
            assert theirs.asked[0] != url
            assert (await other.call("my_data")) == Answer(f"repos of {bob.name}", [])
        assert provider.code_exchanges[bob.name] == 1

        # The provider's access token expires: the next call refreshes it, asking nothing.
        await anyio.sleep(max(0.0, connected + LIVES + 0.2 - time.monotonic()))  # past the vault's margin
        provider.expire_all()
        assert not provider.access_tokens(alice.name)
        refreshed = await user.call("my_data")
        assert refreshed == Answer(f"repos of {alice.name}", [])
        assert provider.refreshes[alice.name] == 1 and provider.code_exchanges[alice.name] == 1

        # Forgetting the connection makes the next call ask again.
        assert (await user.call("forget_demo")).text == "forgotten"
        again = await user.call("my_data")
        assert again.text == f"repos of {alice.name}" and len(again.asked) == 1
        assert provider.code_exchanges[alice.name] == 2
    check_no_token_in(user.transport.bodies + other.transport.bodies, provider)


@pytest.mark.parametrize("era", ERAS)
async def test_a_task_asks_with_input_required_then_completes(
    server: ServerProcess, provider: OAuthProvider, people: Callable[[str, str], Person], era: str
) -> None:
    provider.access_seconds = 3600
    carol = people("carol", era)
    async with signed_in(server, carol, era) as user:
        answer = await user.call_task("my_data_later")
        assert answer.text == f"repos of {carol.name}" and not answer.is_error
        (url,) = answer.asked
        assert "/oauth/connections/demo/start?s=" in url
        (statuses,) = user.tasks.runs
        assert statuses[0] == "working" and "input_required" in statuses and statuses[-1] == "completed", statuses
        again = await user.call_task("my_data_later")  # connected: the task completes without asking
        assert again == Answer(f"repos of {carol.name}", [])
        assert "input_required" not in user.tasks.runs[1] and user.tasks.runs[1][-1] == "completed"
    assert provider.code_exchanges[carol.name] == 1
    check_no_token_in(user.transport.bodies, provider)


@pytest.mark.parametrize("era", ERAS)
async def test_a_link_opened_in_another_users_browser_connects_nothing(
    server: ServerProcess, provider: OAuthProvider, people: Callable[[str, str], Person], era: str
) -> None:
    provider.access_seconds = 3600
    dave, mallory = people("dave", era), people("mallory", era)
    async with signed_in(server, mallory, era):
        pass  # mallory's browser is signed in through the facade as mallory
    async with signed_in(server, dave, era) as user:
        user.answer_with = "decline"
        authorizations = len(provider.authorize_requests)
        if era == "2025-11-25":
            with pytest.raises(MCPError) as raised:
                await user.client.call_tool("my_data", {})
            (elicitation,) = UrlElicitationRequiredError.from_error(raised.value.error).elicitations
            url = elicitation.url
        else:
            declined = await user.call("my_data")
            assert declined.is_error and "declined" in declined.text
            url = user.elicitations[-1].url
        refused = await anyio.to_thread.run_sync(mallory.open_as_another, url)
        assert refused.status_code == 403 and "started by another user" in refused.text
        assert "nothing was connected" in refused.text
        assert len(provider.authorize_requests) == authorizations  # never sent on to the provider
        assert provider.code_exchanges[dave.name] == provider.code_exchanges[mallory.name] == 0
        reused = await anyio.to_thread.run_sync(dave.browser.get, url)
        assert reused.status_code == 400  # the link worked once
        user.answer_with = "follow"  # dave is still not connected: asked again, and this time he connects
        answer = await user.call("my_data")
        assert answer.text == f"repos of {dave.name}" and len(answer.asked) == 1 and answer.asked[0] != url
    check_no_token_in(user.transport.bodies, provider)


@pytest.mark.parametrize("era", ERAS)
async def test_the_upstream_token_is_refreshed_at_the_real_upstream(
    server: ServerProcess, people: Callable[[str, str], Person], era: str
) -> None:
    """`ctx.upstream_token()`: a fresh access token, which the facade gets from oidc-provider with the upstream
    refresh token it kept sealed since the sign-in (without one, or refused, the call is an error result).
    The tool shows only its length; whether the upstream accepts that token, and its refresh once it is
    due, are `test_the_upstream_accepts_the_upstream_token_and_a_refreshed_one`'s."""
    frank = people("frank", era)
    async with signed_in(server, frank, era) as user:
        first = await user.call("upstream_length")
        assert not first.is_error and int(first.text) > 20, first
        assert (await user.call("upstream_length")) == first


async def test_the_upstream_accepts_the_upstream_token_and_a_refreshed_one(
    brief_server: ServerProcess, provider: OAuthProvider
) -> None:
    """`upstream_whoami` sends `ctx.upstream_token()` to the upstream's userinfo endpoint and answers the `sub`
    it names with a hash of the token. Access tokens live `BRIEF_ACCESS` seconds: a second call right away gets
    the same token (kept, not refreshed); one past half its life gets a new one, which the upstream accepts as
    the same user's. One user per era, side by side, so the wait is shared."""
    people = [Person(f"grace-{era[:4]}", provider) for era in ERAS]
    try:
        async with (
            signed_in(brief_server, people[0], ERAS[0]) as modern,
            signed_in(brief_server, people[1], ERAS[1]) as legacy,
        ):
            users = [modern, legacy]

            async def whoami(user: User) -> dict[str, str]:
                answer = await user.call("upstream_whoami")
                assert not answer.is_error and not answer.asked, answer
                said: dict[str, str] = json.loads(answer.text)
                assert said["sub"] == user.person.name, said  # the upstream took the token as this user's
                assert re.fullmatch(r"[0-9a-f]{12}", said["token"]), said
                return said

            began = time.monotonic()  # no first token was refreshed at the upstream before this
            first = [await whoami(user) for user in users]
            fetched = time.monotonic()  # and every one was by this
            again = [await whoami(user) for user in users]
            assert time.monotonic() - began < BRIEF_ACCESS / 2 - 0.2, "too slow to see a kept token"
            assert again == first  # kept: not refreshed while more than half its life is ahead

            await anyio.sleep(max(0.0, fetched + BRIEF_ACCESS / 2 + 0.3 - time.monotonic()))
            later = [await whoami(user) for user in users]
            assert len({said["token"] for said in first + later}) == 4  # refreshed, each sign-in its own
    finally:
        for person in people:
            person.browser.close()


async def test_no_provider_token_in_any_answer_or_the_dev_servers_log(
    server: ServerProcess, provider: OAuthProvider, people: Callable[[str, str], Person]
) -> None:
    """Tokens that live a second are refreshed after half a second, so access and refresh tokens cross the
    facade again here; none reaches the client or the log (nor do the module's other tests' tokens)."""
    provider.access_seconds = 1
    erin = people("erin", "2026-07-28")
    async with signed_in(server, erin, "2026-07-28") as user:
        first = await user.call("my_data")
        assert first.text == f"repos of {erin.name}" and len(first.asked) == 1
        await anyio.sleep(0.6)
        assert (await user.call("my_data")) == Answer(f"repos of {erin.name}", [])
    assert provider.refreshes[erin.name] >= 1
    check_no_token_in(user.transport.bodies, provider)
    log = server.log_text()
    assert "a user connected demo" in log  # the dev server's log, which saw the connection
    leaked = [token for token in issued_tokens(provider) if token in log]
    assert not leaked, "a provider token is in the dev server's log"
    assert "demo-secret" not in log
