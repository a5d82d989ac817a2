"""`Context`: what a handler may ask of the request it serves (progress, logging, input, cancellation).

A handler is re-entrant: `ask()` (and `elicit`/`sample`/`list_roots` built on it) either returns an
answer recorded for its key or suspends the call; the transport decides whether a suspension
becomes an `InputRequiredResult` (2026), a request on the call's SSE stream that the call waits for
(legacy, streaming), or a request in a response that ends, the call re-run from the top with the
recorded answers when the client resumes (legacy, buffered). So code before an `ask()` may run
more than once; its notifications are delivered once. `step()` and `sleep()` (server/steps.py) make a
task's work survive those re-runs.
"""

from __future__ import annotations

import secrets
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypeVar, overload

from ..protocol import revisions
from ..protocol.errors import MISSING_CLIENT_CAPABILITY, URL_ELICITATION_REQUIRED, MCPError
from ..protocol.names import LOG_LEVELS
from .call import CallInfo, Hooks, read_only
from .credentials import NO_CREDENTIALS, Credentials, CredentialsUnavailable
from .steps import InlineCheckpoints, Steps
from .suspensions import CancelledByClient

if TYPE_CHECKING:  # imported by `elicit` and `sample`: a call that asks nothing loads neither
    from .elicitation import Elicitation
    from .sampling import Sampled

T = TypeVar("T")


class ClientError(Exception):
    """The client answered a server-to-client request (sampling, elicitation, roots) with a JSON-RPC error.

    A tool may catch it; one that does not ends with an error result naming the refusal (`method`: the
    request refused, e.g. `sampling/createMessage`), logged as a warning: the client refused, the server
    has no bug."""

    def __init__(self, code: int, message: str, method: str | None = None) -> None:
        super().__init__(f"client error {code}: {message}")
        self.code = code
        self.message = message
        self.method = method


class Context:
    """Per-request services for a tool, resource or prompt handler."""

    def __init__(self, info: CallInfo, hooks: Hooks) -> None:
        self.request_id = info.request_id
        self.method = info.method
        self.protocol_version = info.protocol_version
        self.client_capabilities = info.client_capabilities
        self.meta = info.meta
        self.session_id = info.session_id
        self.principal = info.principal
        """Who is calling (`<issuer>#<subject>`, an IAM ARN, ...); None when auth is `none`."""
        self.scopes: frozenset[str] = info.scopes if info.scopes is not None else frozenset()
        """The OAuth scopes the caller's token grants; empty under auth `none`, where no scope is enforced
        (a tool declared with `scopes=` is listed and runs for anyone)."""
        self.claims = read_only(info.claims)
        """The caller's validated token claims, read-only (`ctx.claims.get("groups", [])`): under auth `jwt`
        and `proxy` the access token's (`iss`, `sub`, `scope`, and `email`, `groups`, ... as the issuer
        puts them); under `gateway` the claims or context the API Gateway authorizer passed (REST API
        authorizers pass every value as a string); empty under auth `none` and for an IAM caller. A task's
        run sees the claims of the request that created it."""
        self.task_id = info.task_id
        self.deadline = info.deadline
        """When this request must be answered (epoch seconds), None when unbounded: outgoing calls end before."""
        """The task this call runs as (on the worker), else None."""
        self._idempotency_key = info.idempotency_key
        self.state = info.state
        """What the app's lifespan yielded (`@app.lifespan`), shared by every request of this process."""
        self.sync_in_thread = info.sync_in_thread
        """Whether a sync handler runs in a worker thread (the streaming server and the task worker, where
        requests run concurrently), or on the event loop (a Lambda invocation serves one request)."""
        self._log_level = info.log_level
        self._hooks = hooks
        self._last_progress: float | None = None
        self._keys: set[str] = set()
        """Input keys asked for so far in this run (a re-run asks again, in the same order)."""
        self._steps = Steps(hooks.checkpoints or InlineCheckpoints(), in_thread=info.sync_in_thread)

    @property
    def idempotency_key(self) -> str:
        """The same on every run of this call: every run of a task (`task:<task id>`), every round of a 2026
        call that asks the client something, every re-run of a suspended legacy call. A run may happen more
        than once (a worker that crashed, a storage fault after the tool ran): key side effects with it, so
        that doing one twice does it once."""
        if not self._idempotency_key:  # minted when first read: most calls never ask for it
            self._idempotency_key = secrets.token_urlsafe(12)
        return self._idempotency_key

    async def start_task(self) -> None:
        """For a tool declared with `defer_task=True`: the work from here on runs as a task.

        Input asked for before this point is a synchronous (MRTR) round on the call itself; when
        the client supports tasks, this returns the task to the client and the worker re-runs the
        tool from the top with those answers recorded. Elsewhere (on the worker, or when the call
        runs synchronously) it returns at once.
        """
        if self._hooks.start_task is not None:
            await self._hooks.start_task()

    # -- steps and sleeps (server/steps.py) ----------------------------------------------------
    @overload
    async def step(self, name: str, fn: Callable[..., Awaitable[T]], *args: Any) -> T: ...
    @overload
    async def step(self, name: str, fn: Callable[..., T], *args: Any) -> T: ...
    async def step(self, name: str, fn: Callable[..., Any], *args: Any) -> Any:
        """`fn(*args)` (sync or async), run once per task: its result, which must be JSON (returned as JSON
        gives it back), is recorded, and a re-run of the task (after an answer, a crash, a redelivery) gets
        it without calling `fn`. `name` is unique in the run. If `fn` raises, nothing is recorded; if its
        run stops while `fn` runs, the task fails rather than run `fn` twice. Outside a task `fn` just runs."""
        return await self._steps.step(name, fn, args)

    async def sleep(self, seconds: float, *, name: str | None = None) -> None:
        """Wait `seconds`. In a task the task waits without holding compute (its run ends, and it runs again
        when the time is up; a sleep a re-run already passed returns at once). Outside a task it sleeps in
        the request, and fails (`ToolError`) when that would pass the request's deadline. `name` (default
        `sleep`, `sleep#2`, ... in the order of the run) is unique in the run."""
        await self._steps.sleep(seconds, name)

    # -- progress and logging -------------------------------------------------------------
    @property
    def progress_token(self) -> str | int | None:
        token = self.meta.get("progressToken")
        return token if isinstance(token, (str, int)) and not isinstance(token, bool) else None

    async def report_progress(self, progress: float, total: float | None = None, message: str | None = None) -> None:
        """Send `notifications/progress` when the request carried a progress token; values must increase."""
        token = self.progress_token
        if token is None or (self._last_progress is not None and progress <= self._last_progress):
            return
        self._last_progress = progress
        params: dict[str, Any] = {"progressToken": token, "progress": progress}
        if total is not None:
            params["total"] = total
        if message is not None:
            params["message"] = message
        await self._hooks.emit("notifications/progress", params)

    async def log(self, level: str, data: Any, logger: str | None = None) -> None:
        """Send `notifications/message` if `level` is at or above the level in force for this request."""
        if level not in LOG_LEVELS:
            raise ValueError(f"unknown log level {level!r}")
        if self._log_level is None or LOG_LEVELS.index(level) < LOG_LEVELS.index(self._log_level):
            return
        params: dict[str, Any] = {"level": level, "data": data}
        if logger is not None:
            params["logger"] = logger
        await self._hooks.emit("notifications/message", params)

    async def debug(self, data: Any) -> None:
        await self.log("debug", data)

    async def info(self, data: Any) -> None:
        await self.log("info", data)

    async def warning(self, data: Any) -> None:
        await self.log("warning", data)

    async def error(self, data: Any) -> None:
        await self.log("error", data)

    # -- client input (re-entrant) --------------------------------------------------------
    async def ask(self, requests: Mapping[str, dict[str, Any]]) -> dict[str, Any]:
        """Obtain answers for several input requests at once, keyed by names unique in this handler.

        Each value is `{"method": ..., "params": ...}` with method `elicitation/create`,
        `sampling/createMessage` or `roots/list`. Returns the answers by key, or suspends. A key asked
        for twice in one run is an error: the second question would get the first one's answer.
        """
        self._steps.outside("asking the client")
        for key in requests:
            self._claim(key)
        return await self._hooks.input_channel.ask(requests)

    def _claim(self, key: str) -> None:
        if key in self._keys:
            raise ValueError(
                f"the input key {key!r} was already asked for in this request: each question needs a key of"
                " its own (or none: questions without key= are numbered in the order they are asked)"
            )
        self._keys.add(key)

    def _key(self, kind: str, key: str | None) -> str:
        """`key`, or the next free one of `kind`: `elicit`, `elicit#2`, ... in the order of the run, so each
        question keeps its key when the handler runs again."""
        if key is not None:
            return key
        number, chosen = 1, kind
        while chosen in self._keys:
            number += 1
            chosen = f"{kind}#{number}"
        return chosen

    async def _ask_one(self, key: str, method: str, params: dict[str, Any]) -> dict[str, Any]:
        answer: dict[str, Any] = (await self.ask({key: {"method": method, "params": params}}))[key]
        return answer

    @overload
    async def elicit(self, message: str, schema: dict[str, Any], *, key: str | None = None) -> dict[str, Any]: ...
    @overload
    async def elicit(self, message: str, schema: type[T], *, key: str | None = None) -> Elicitation[T]: ...
    @overload
    async def elicit(self, message: str, schema: Any, *, key: str | None = None) -> Elicitation[Any]: ...
    async def elicit(self, message: str, schema: Any, *, key: str | None = None) -> Any:
        """Ask the user for form input.

        With a type (a pydantic model, a dataclass, `bool`/`str`/`int`/`float`, a `Literal` or an `Enum`
        of strings) the form is derived from it and the answer is an `Elicitation`: `.action`, and
        `.data`, the validated instance, on accept. With a JSON Schema dict the answer is the raw
        `ElicitResult` dict (`action`, `content`). `key` names the question (default: `elicit`, then
        `elicit#2`, ... in the order asked)."""
        from .elicitation import form_for

        form = None if isinstance(schema, dict) else form_for(schema)
        params = {"message": message, "requestedSchema": schema if form is None else form.schema}
        answer = await self._ask_one(self._key("elicit", key), "elicitation/create", params)
        return answer if form is None else form.answer(answer)

    async def elicit_url(
        self, message: str, url: str, *, key: str | None = None, elicitation_id: str | None = None
    ) -> dict[str, Any]:
        """Ask the user to complete a flow at `url` (URL-mode elicitation). `accept` means the user
        consented, not that the flow finished: on 2025-11-25 sessions, call
        `notify_elicitation_complete(elicitation_id)` when it has. The id defaults to one derived from
        the request and the question's key (stable across re-runs; default keys `elicit_url`, ...)."""
        chosen = self._key("elicit_url", key)
        params: dict[str, Any] = {"mode": "url", "message": message, "url": url}
        if self._legacy_url_ids:
            params["elicitationId"] = elicitation_id or self.elicitation_id(chosen)
        return await self._ask_one(chosen, "elicitation/create", params)

    def elicitation_id(self, key: str = "elicit_url") -> str:
        """The default `elicitationId` of `elicit_url(key=key)` in this request."""
        return f"{self.session_id or 'stateless'}:{self.request_id}:{key}"

    async def notify_elicitation_complete(self, elicitation_id: str) -> None:
        """2025-11-25: tell the client the URL-mode elicitation `elicitation_id` finished (no-op elsewhere:
        earlier revisions and 2026 have no such notification)."""
        if self._legacy_url_ids:
            await self._hooks.emit("notifications/elicitation/complete", {"elicitationId": elicitation_id})

    def url_elicitation_required(self, message: str, url: str, *, elicitation_id: str | None = None) -> Exception:
        """`raise ctx.url_elicitation_required(...)`: end this request with -32042 (2025-11-25), naming a
        URL flow the user must complete before the client retries. On other revisions (no -32042) the
        same need is an ordinary URL elicitation: use `await ctx.elicit_url(...)`."""
        if not self._legacy_url_ids:
            return RuntimeError("-32042 exists only on 2025-11-25 sessions: use `await ctx.elicit_url(...)`")
        elicitation = {
            "mode": "url",
            "message": message,
            "url": url,
            "elicitationId": elicitation_id or self.elicitation_id(),
        }
        return MCPError(URL_ELICITATION_REQUIRED, message, {"elicitations": [elicitation]})

    @property
    def _legacy_url_ids(self) -> bool:
        """URL-mode elicitation ids, their completion notification and -32042 exist on 2025-11-25 only."""
        return revisions.has_elicitation_ids(self.protocol_version)

    async def connection(self, name: str) -> str:
        """The calling user's access token at connection `name` (`app.connection(...)`), refreshed when it
        has expired. When the user has not connected yet, the user is asked to (a URL elicitation to the
        facade's `/connections/<name>/start`; on 2025-11-25 outside a task, error -32042 naming it), and
        the call runs again once they have. `ConnectionDeclined` when they decline;
        `CredentialsUnavailable` without the authorization facade or a person signed in through it."""
        return await self._credentials().connection(self, name)

    async def disconnect(self, name: str) -> None:
        """Forget the calling user's tokens at connection `name`: the next `connection(name)` asks again."""
        await self._credentials().disconnect(self, name)

    async def upstream_token(self) -> str:
        """A fresh access token from the identity provider the caller signed in with through the
        authorization facade (refreshed with the refresh token the facade keeps sealed, one refresh at a
        time per sign-in). `CredentialsUnavailable` outside proxy mode."""
        return await self._credentials().upstream_token(self)

    async def exchange_token(self, audience: str, scopes: Sequence[str] = ()) -> str:
        """A token for another API (`audience`, with `scopes`) that trusts the caller's identity provider,
        in exchange for the caller's upstream token (RFC 8693 token exchange; Entra ID's on-behalf-of),
        kept until it nears expiry. `CredentialsUnavailable` where the provider supports neither."""
        return await self._credentials().exchange_token(self, audience, scopes)

    def _credentials(self) -> Credentials:
        if self._hooks.credentials is None:
            raise CredentialsUnavailable(NO_CREDENTIALS)
        return self._hooks.credentials

    async def sample(
        self,
        messages: str | Sequence[dict[str, Any]],
        *,
        max_tokens: int = 256,
        system_prompt: str | None = None,
        temperature: float | None = None,
        model_preferences: dict[str, Any] | Sequence[str] | None = None,
        stop_sequences: Sequence[str] | None = None,
        tools: Sequence[dict[str, Any]] | None = None,
        tool_choice: str | dict[str, Any] | None = None,
        key: str | None = None,
        **options: Any,
    ) -> Sampled:
        """Ask the client's model for a completion: `.text`, `.model`, `.stop_reason`, `.content`.

        `messages` may be one user text. `model_preferences` is a `ModelPreferences` dict or a list of
        model name hints. `tools` and `tool_choice` need a 2025-11-25 or 2026 client that declared
        `sampling.tools` (else the tool fails with a clear error); other `options` go into the params
        as they are (`includeContext`, `metadata`)."""
        from .sampling import Sampled, sampling_params

        params = sampling_params(
            messages,
            max_tokens=max_tokens,
            system_prompt=system_prompt,
            temperature=temperature,
            model_preferences=model_preferences,
            stop_sequences=stop_sequences,
            tools=tools,
            tool_choice=tool_choice,
            options=options,
        )
        return Sampled.of(await self._ask_one(self._key("sample", key), "sampling/createMessage", params))

    async def list_roots(self, *, key: str | None = None) -> list[dict[str, Any]]:
        """The client's roots (`[{"uri": "file://...", "name": ...}]`)."""
        answer = await self._ask_one(self._key("roots", key), "roots/list", {})
        roots = answer.get("roots", [])
        return roots if isinstance(roots, list) else []

    def require(self, capability: str) -> None:
        """Fail the request with -32021 (2026) unless the client declared `capability` for it."""
        if capability not in self.client_capabilities:
            raise MCPError(
                MISSING_CLIENT_CAPABILITY,
                f"This request needs the client capability {capability!r}",
                {"requiredCapabilities": {capability: {}}},
            )

    # -- cancellation and streams ---------------------------------------------------------
    @property
    def cancelled(self) -> bool:
        return self._hooks.is_cancelled()

    def check_cancelled(self) -> None:
        if self._hooks.is_cancelled():
            raise CancelledByClient("the client cancelled this request")

    async def close_sse_stream(self) -> None:
        """Legacy SSE polling: end the current response stream; the client resumes with `Last-Event-ID`."""
        if self._hooks.close_stream is not None:
            await self._hooks.close_stream()

    async def notify_list_changed(self, kind: str) -> None:
        """Tell listening clients the `tools`, `prompts` or `resources` list changed."""
        if self._hooks.notify_changed is not None:
            await self._hooks.notify_changed(kind, None, None)

    async def notify_resource_updated(self, uri: str, *, principal: str | None = None) -> None:
        """Tell subscribed clients the resource at `uri` changed; with `principal`, only that principal's."""
        if self._hooks.notify_changed is not None:
            await self._hooks.notify_changed("resource", uri, principal)
