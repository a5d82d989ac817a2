"""Where the facade fuzzer sends: a kit with the authorization facade (`LAMBDA_MCP_AUTH=proxy`, its
resource on loopback) behind the Lambda handler (Mangum, fed API Gateway HTTP API events, cookies in
the event's `cookies` as API Gateway sends them) or the streaming server (in-process ASGI), with a
stand-in upstream, a loopback server for the probes' metadata documents, and the real values a probe
may name (`Ref`s), made by signing in as a browser would. For identity for agents (`agent_target`) it
has operator clients (`LAMBDA_MCP_AUTH_CLIENTS`, inline), trusted enterprise IdPs whose keys a stand-in
fetch serves (one never does), DPoP `optional` (`NonceFacadeTarget`: with nonces), and it signs each
probe's `Signed` JWTs and gets the tokens (bound, unbound, an enterprise user's) that `/mcp` probes use.

The process has no DNS while a target is open (`LoopbackResolver`): names other than `localhost` and
IP literals do not resolve, so no metadata document fetch leaves the machine.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import hashlib
import ipaddress
import itertools
import json
import logging
import re
import secrets
import socket
import time
import traceback
from collections.abc import Callable
from http.cookies import CookieError, SimpleCookie
from http.server import BaseHTTPRequestHandler
from typing import Any
from urllib.parse import parse_qs, quote, quote_plus, unquote, unquote_plus, urlencode, urlsplit

from mangum import Mangum
from starlette.requests import cookie_parser
from starlette.types import Message, Receive, Scope, Send

from lambda_mcp.facade.upstream import UpstreamError
from lambda_mcp.kit import Stores, build_kit
from lambda_mcp.loader import load_app
from lambda_mcp.local.context import LambdaContext
from lambda_mcp.local.gateways import http_api_event
from lambda_mcp.storage.dynamodb import keys
from lambda_mcp.storage.facade import InMemoryFacadeStore
from tests.support.loopback import LoopbackServer, respond
from tests.support.processes import ROOT
from tests.unit.test_facade_http import FakeUpstream, settings

from .agent_probes import ASSERTION_TYPE, JWT_BEARER, TOKEN_URL, Cat, Signed
from .agent_target import Agents
from .facade_probes import BASE, PATH, PORT, REDIRECT, RESOURCE, SELF, Document, FacadeProbe, Form
from .facade_properties import ANSWER_SECONDS, FacadeOutcome, authority
from .probes import Raw, Ref, mangle
from .targets import PK_LIMIT, ErrorLog, Guard

HOST = "127.0.0.1:8000"
SCOPED = ROOT / "tests/apps/scoped.py"
USERS = re.compile(r"alice|bob|user-[0-9]{1,9}")
"""The codes the stand-in upstream knows (each signs in the user of that name; the target's own
sign-ins use `user-<n>` for a user who never approved anything)."""


class FuzzUpstream(FakeUpstream):
    """The tests' stand-in upstream, refusing a code it never issued as a real provider would."""

    def exchange(self, code: str, verifier: str) -> dict[str, Any]:
        if not USERS.fullmatch(code):
            raise UpstreamError("the upstream refused the code")
        return super().exchange(code, verifier)


class LoopbackResolver:
    """`socket.getaddrinfo` for `localhost` and IP literals only (others: not found) while installed."""

    def __init__(self) -> None:
        self._real = socket.getaddrinfo

    def __enter__(self) -> LoopbackResolver:
        socket.getaddrinfo = self._resolve
        return self

    def __exit__(self, *exc: object) -> None:
        socket.getaddrinfo = self._real

    def _resolve(self, host: Any, *args: Any, **kwargs: Any) -> Any:
        name = host.decode() if isinstance(host, bytes) else str(host or "")
        if name.lower() == "localhost" or _numeric(name):
            return self._real(host, *args, **kwargs)
        raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")


def _numeric(name: str) -> bool:
    with contextlib.suppress(ValueError):
        ipaddress.ip_address(name.split("%", 1)[0])
        return True
    try:
        socket.inet_aton(name)  # 127.1, 0x7f000001, 2130706433: resolved without DNS
    except (OSError, UnicodeError, ValueError):
        return False
    return True


class DocumentServer:
    """Serves each probe's `Document` at a path of its own (`/d/<n>`) on a loopback port."""

    def __init__(self) -> None:
        self.served: dict[str, tuple[Document, str]] = {}
        self.server = LoopbackServer(self._handle)
        self.port = self.server.port
        self._numbers = itertools.count()

    def publish(self, document: Document, template: str) -> str:
        """The client id URL for `document` (`template` with the port and a fresh path filled in)."""
        path = f"/d/{next(self._numbers)}"
        url = template.replace(PORT, str(self.port)).replace(PATH, path)
        self.served[path] = (document, url)
        return url

    def _handle(self, handler: BaseHTTPRequestHandler) -> None:
        found = self.served.get(handler.path.split("?", 1)[0])
        if found is None:
            respond(handler, 404, b'{"error":"not found"}')
            return
        document, url = found
        body = document.body.replace(SELF.encode(), json.dumps(url)[1:-1].encode("utf-8", "surrogatepass"))
        headers = dict(document.headers)
        content_type = headers.pop("Content-Type", None)
        location = headers.pop("Location", None)
        extra = list(headers.items())
        if location is not None:
            extra.append(("Location", location.replace(PORT, str(self.port))))
        with contextlib.suppress(OSError):  # the facade may have hung up (a body over its cap)
            respond(handler, document.status, body, content_type, extra)

    def stop(self) -> None:
        self.server.stop()


class PlacedGuard(Guard):
    """`targets.Guard`, naming where in the kit an escaped exception was raised (so two bugs raising one
    exception type are told apart)."""

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            await self.app(scope, receive, send)
        except Exception as exc:
            self.escaped.append(f"{type(exc).__name__} in {raised_at(exc)}: {str(exc)[:200]}")
            raise


def raised_at(exc: BaseException) -> str:
    """The innermost frame of the kit (else the innermost) that the exception passed through."""
    frames = traceback.extract_tb(exc.__traceback__)
    ours = [frame for frame in frames if "lambda_mcp" in frame.filename] or frames[-1:]
    if not ours:
        return "?"
    path = ours[-1].filename.replace("\\", "/")
    return f"{path.rsplit('lambda_mcp/', 1)[-1]}:{ours[-1].name}"


class AuditedFacadeStore(InMemoryFacadeStore):
    """The in-memory facade store, checking every key against what `DynamoDBFacadeStore` can write."""

    def __init__(self) -> None:
        super().__init__(max_rows=1_000_000)
        self.problems: list[str] = []

    def _audit(self, kind: str, key: str) -> None:
        try:
            stored = key if len(key) <= 200 else "sha256:" + hashlib.sha256(key.encode()).hexdigest()
            size = len(keys.facade_pk(kind, stored).encode())
        except UnicodeEncodeError:
            self.problems.append(f"a {kind} key is not valid UTF-8: {key[:80]!r}")
            return
        if size > PK_LIMIT:
            self.problems.append(f"a {kind} key takes {size} bytes (limit {PK_LIMIT})")

    async def put(self, kind: str, key: str, value: dict[str, Any], expires_at: float, version: str = "") -> None:
        self._audit(kind, key)
        await super().put(kind, key, value, expires_at, version)

    async def get(self, kind: str, key: str, now: float) -> tuple[dict[str, Any], str] | None:
        self._audit(kind, key)
        return await super().get(kind, key, now)

    async def take(self, kind: str, key: str, now: float) -> dict[str, Any] | None:
        self._audit(kind, key)
        return await super().take(kind, key, now)


def pkce(verifier: str) -> str:
    return base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()


def txn_of(status: int | None, body: bytes, step: str) -> str:
    page = body.decode("utf-8", "replace")
    marker = 'name="txn" value="'
    assert status == 200 and marker in page, f"a sign-in's {step} answered {status}: {page[:300]!r}"
    return page.split(marker, 1)[1].split('"', 1)[0]


def query_of(url: str) -> dict[str, str]:
    return {name: values[0] for name, values in parse_qs(urlsplit(url).query).items()}


class Client:
    """A client the target registered: its id, secret (confidential clients) and redirect URI."""

    def __init__(self, answer: dict[str, Any]) -> None:
        self.client_id: str = answer["client_id"]
        self.secret: str = answer.get("client_secret", "")
        self.redirect: str = answer["redirect_uris"][0]
        self.method: str = answer["token_endpoint_auth_method"]


class FacadeTarget:
    """One facade behind the Lambda handler; `send` fills in a probe's `Ref`s and records the exchange."""

    name = "lambda"
    streaming = False
    extra: dict[str, str] = {}
    """Settings of this variant (`LAMBDA_MCP_AUTH_DPOP_NONCE`)."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.resolver = LoopbackResolver().__enter__()
        self.documents = DocumentServer()
        self.errors = ErrorLog()
        logger = logging.getLogger("lambda_mcp")
        logger.addHandler(self.errors)
        if logger.getEffectiveLevel() > logging.ERROR:
            logger.setLevel(logging.ERROR)
        self.agents = Agents(self.documents.publish, self.documents.port)
        self.store = AuditedFacadeStore()
        stores = Stores.memory()
        stores = Stores(stores.sessions, stores.events, stores.tasks, stores.calls, stores.changes, self.store)
        kit = build_kit(
            load_app(str(SCOPED)),
            settings(
                LAMBDA_MCP_AUTH_SCOPES="mcp:tools inventory:read inventory:write", **self.agents.env(), **self.extra
            ),
            streaming=self.streaming,
            local=self.streaming,
            stores=stores,
        )
        assert kit.facade is not None
        kit.facade.upstream = FuzzUpstream()  # type: ignore[assignment]
        unlimit(kit.facade)
        self.facade = kit.facade
        self.agents.install(kit.facade)
        self.tokens: dict[str, tuple[str, float]] = {}
        self.guard = PlacedGuard(kit.asgi())
        self.connect()
        self.clients: dict[str, Client] = {}
        self.numbers = itertools.count()
        self.seed()
        self.authorities = frozenset(filter(None, (authority(c.redirect) for c in self.clients.values())))
        """Where any probe may be redirected: the registered clients' redirect URIs (on any port)."""
        self.secrets = [*self.agents.static_secrets, *(c.secret for c in self.clients.values() if c.secret)]
        """What no answer may show: the operator client's secret and hash, the DCR clients' secrets."""

    def connect(self) -> None:
        self.handler = Mangum(self.guard, lifespan="off")

    def close(self) -> None:
        logging.getLogger("lambda_mcp").removeHandler(self.errors)
        self.documents.stop()
        self.resolver.__exit__()
        self.loop.close()

    # -- one request --------------------------------------------------------------------------------
    def exchange(
        self, method: str, target: str, headers: list[tuple[str, str]], cookies: list[str], body: bytes
    ) -> tuple[int | None, dict[str, str], bytes, list[str]]:
        """(status, headers, body, Set-Cookie values) of one request through the Lambda handler (a header
        sent twice arrives once, its values joined by commas, as API Gateway passes it)."""
        asyncio.set_event_loop(self.loop)
        event = http_api_event(method, target, {"host": HOST, **joined(headers)}, body, HOST)
        if cookies:
            event["cookies"] = cookies
        try:
            response = self.handler(event, LambdaContext())
        except Exception as exc:  # Mangum itself failed: Lambda reports an invocation error, API Gateway a 5xx
            self.guard.escaped.append(f"handler raised {type(exc).__name__}: {str(exc)[:200]}")
            return 502, {}, b"", []
        answer = {str(k).lower(): str(v) for k, v in (response.get("headers") or {}).items()}
        raw = response.get("body") or ""
        data = base64.b64decode(raw) if response.get("isBase64Encoded") else str(raw).encode()
        return int(response["statusCode"]), answer, data, list(response.get("cookies") or [])

    def call(
        self,
        method: str,
        path: str,
        query: dict[str, str] | None = None,
        form: dict[str, str] | None = None,
        headers: dict[str, str] | None = None,
        browser: str | None = None,
        consent: str | None = None,
    ) -> tuple[int | None, dict[str, str], bytes, list[str]]:
        """A request of the target's own (seeding, a sign-in for a probe's `Ref`s)."""
        sent = dict(headers or {})
        body = b""
        if form is not None:
            body, sent["content-type"] = urlencode(form).encode(), "application/x-www-form-urlencoded"
        target = path + (f"?{urlencode(query)}" if query else "")
        jar = [f"lmcp_browser={browser}"] if browser else []
        jar += [f"lmcp_consent={consent}"] if consent else []
        return self.exchange(method, target, list(sent.items()), jar, body)

    # -- real values ------------------------------------------------------------------------------------
    def seed(self) -> None:
        """Register the clients the probes name; `alice` approves `web` and `widest`, and her consent
        cookie is kept."""
        web = "https://client.example/callback"
        widest = "https://client.example/" + "%F0%9F%98%80" * 164 + "w" * 9  # 2000 characters, the most
        for name, metadata in (
            ("public", {"redirect_uris": [REDIRECT], "client_name": "Public", "token_endpoint_auth_method": "none"}),
            ("basic", {"redirect_uris": [REDIRECT], "client_name": "Basic"}),
            ("post", {"redirect_uris": [REDIRECT], "token_endpoint_auth_method": "client_secret_post"}),
            ("web", {"redirect_uris": [web], "client_name": "Web", "token_endpoint_auth_method": "none"}),
            ("widest", {"redirect_uris": [widest], "token_endpoint_auth_method": "none"}),
        ):
            status, _, body, _ = self.exchange(
                "POST", "/oauth/register", [("content-type", "application/json")], [], json.dumps(metadata).encode()
            )
            assert status == 201, f"seeding: registering {name} answered {status}: {body[:300]!r}"
            self.clients[name] = Client(json.loads(body))
        self.sign_in("widest")
        self.consent_cookie = self.sign_in("web")[2]

    def browser(self) -> str:
        """A browser id in the facade's own format (it replaces any other with one of its own)."""
        return f"fuzz-browser-{next(self.numbers):019d}"

    def authorization(self, client: str, verifier: str) -> dict[str, str]:
        registered = self.clients[client]
        return {
            "response_type": "code",
            "client_id": registered.client_id,
            "redirect_uri": registered.redirect,
            "code_challenge": pkce(verifier),
            "code_challenge_method": "S256",
            "state": "st-1",
            "resource": RESOURCE,
            "scope": "mcp:tools",
        }

    def consent_page(self, client: str, verifier: str = "v" * 64) -> tuple[str, str]:
        """(txn, browser cookie) of a fresh consent page for `client`."""
        browser = self.browser()
        status, _, body, _ = self.call("GET", "/oauth/authorize", self.authorization(client, verifier), browser=browser)
        return txn_of(status, body, "authorize"), browser

    def upstream_state(self, client: str, verifier: str = "v" * 64) -> tuple[str, str]:
        """(upstream state, browser cookie): a consent approved, the browser on its way to the upstream."""
        txn, browser = self.consent_page(client, verifier)
        status, headers, body, _ = self.call(
            "POST", "/oauth/consent", form={"txn": txn, "decision": "approve", "confirm": "yes"}, browser=browser
        )
        assert status == 302, f"a sign-in's consent answered {status}: {body[:300]!r}"
        return query_of(headers["location"])["state"], browser

    def remembered_state(self, client: str) -> tuple[str, str]:
        """(upstream state, browser cookie) of an authorization `alice`'s consent cookie sent straight to
        the upstream (`client` redirects to https, which she approved)."""
        browser = self.browser()
        status, headers, body, _ = self.call(
            "GET",
            "/oauth/authorize",
            self.authorization(client, "v" * 64),
            browser=browser,
            consent=self.consent_cookie,
        )
        assert status == 302, f"a remembered authorize answered {status}: {body[:300]!r}"
        return query_of(headers["location"])["state"], browser

    def confirm_page(self, client: str) -> tuple[str, str]:
        """(txn, browser cookie) of the consent page shown again when someone other than the remembered
        user signs in (a new user, who never approved `client`)."""
        state, browser = self.remembered_state(client)
        user = f"user-{next(self.numbers)}"
        status, _, body, _ = self.call("GET", "/oauth/callback", {"code": user, "state": state}, browser=browser)
        return txn_of(status, body, "callback"), browser

    def sign_in(self, client: str) -> tuple[str, str, str]:
        """(code, verifier, consent cookie) of a complete sign-in of `alice` for `client`."""
        verifier = secrets.token_urlsafe(48)
        state, browser = self.upstream_state(client, verifier)
        status, headers, body, set_cookies = self.call(
            "GET", "/oauth/callback", {"code": "alice", "state": state}, browser=browser
        )
        assert status == 302, f"a sign-in's callback answered {status}: {body[:300]!r}"
        consent = ""
        for header in set_cookies:
            with contextlib.suppress(CookieError):
                morsel = SimpleCookie(header).get("lmcp_consent")
                consent = morsel.value if morsel is not None else consent
        return query_of(headers["location"])["code"], verifier, consent

    def token(self, client: str, form: dict[str, str]) -> dict[str, Any]:
        registered = self.clients[client]
        headers: dict[str, str] = {}
        if registered.method == "client_secret_basic":
            headers["authorization"] = basic(registered.client_id, registered.secret)
        elif registered.method == "client_secret_post":
            form = {**form, "client_id": registered.client_id, "client_secret": registered.secret}
        else:
            form = {**form, "client_id": registered.client_id}
        status, _, body, _ = self.call("POST", "/oauth/token", form=form, headers=headers)
        assert status == 200, f"a sign-in's token request answered {status}: {body[:300]!r}"
        answer: dict[str, Any] = json.loads(body)
        return answer

    def refresh_token(self, client: str) -> str:
        code, verifier, _ = self.sign_in(client)
        form = {"grant_type": "authorization_code", "code": code, "code_verifier": verifier}
        return str(self.token(client, {**form, "redirect_uri": self.clients[client].redirect})["refresh_token"])

    def nonce(self) -> str | None:
        """The DPoP nonce a client would have been given (None: the facade asks for none)."""
        proofs = self.facade.proofs
        return proofs.nonces.current() if proofs is not None and proofs.nonces is not None else None

    def proof(self, method: str, url: str, access_token: str | None = None) -> str:
        """A valid DPoP proof by the key the target's bound tokens are bound to."""
        return self.agents.sign(Signed("dpop"), method=method, url=url, access_token=access_token, nonce=self.nonce())

    def machine_token(self, kind: str) -> str:
        """An access token of `agent-1`: `bound-token` (client_credentials, DPoP-bound), `enterprise-token`
        (an ID-JAG's user, DPoP-bound) or `unbound-token` (client_credentials, Bearer); kept half an hour."""
        kept = self.tokens.get(kind)
        if kept is not None and time.monotonic() - kept[1] < 1800:
            return kept[0]
        assertion = self.agents.sign(Signed("assertion"), method="POST", url=TOKEN_URL)
        form = {"grant_type": "client_credentials", "client_assertion_type": ASSERTION_TYPE}
        form["client_assertion"] = assertion
        if kind == "enterprise-token":
            form |= {"grant_type": JWT_BEARER, "assertion": self.agents.sign(Signed("id-jag"), method="", url="")}
        headers = {} if kind == "unbound-token" else {"dpop": self.proof("POST", TOKEN_URL)}
        status, _, body, _ = self.call("POST", "/oauth/token", form=form, headers=headers)
        assert status == 200, f"a {kind} request answered {status}: {body[:300]!r}"
        answer = json.loads(body)
        assert answer["token_type"] == ("Bearer" if kind == "unbound-token" else "DPoP"), answer
        self.tokens[kind] = (str(answer["access_token"]), time.monotonic())
        return self.tokens[kind][0]

    def spent_id_jag(self) -> str:
        """A valid ID-JAG for `agent-1`, already exchanged once (its jti is spent)."""
        jag = self.agents.sign(Signed("id-jag"), method="", url="")
        form = {"grant_type": JWT_BEARER, "assertion": jag, "client_assertion_type": ASSERTION_TYPE}
        form["client_assertion"] = self.agents.sign(Signed("assertion"), method="POST", url=TOKEN_URL)
        status, _, body, _ = self.call("POST", "/oauth/token", form=form)
        assert status == 200, f"an ID-JAG's first use answered {status}: {body[:300]!r}"
        return jag

    def bound_refresh(self) -> str:
        """A refresh token of the public client bound to the target's DPoP key (a sign-in, then the code
        redeemed with a proof)."""
        code, verifier, _ = self.sign_in("public")
        registered = self.clients["public"]
        form = {"grant_type": "authorization_code", "code": code, "code_verifier": verifier}
        form |= {"redirect_uri": registered.redirect, "client_id": registered.client_id}
        status, _, body, _ = self.call(
            "POST", "/oauth/token", form=form, headers={"dpop": self.proof("POST", TOKEN_URL)}
        )
        assert status == 200, f"a bound sign-in's token request answered {status}: {body[:300]!r}"
        return str(json.loads(body)["refresh_token"])

    # -- a probe ----------------------------------------------------------------------------------------
    def send(self, probe: FacadeProbe) -> FacadeOutcome:
        """Fill in the probe's references, send it, and record what the properties need."""
        values = Values(self, probe)
        query = [(name, values.fill(value)) for name, value in probe.query]
        body = self.body(probe.body, values)
        pairs = [(name, header_safe(values.fill(value))) for name, value in probe.headers]
        jar = [f"{name}={header_safe(values.fill(value))}" for name, value in probe.cookies]
        encoded = urlencode(query, quote_via=quote) if query else ""
        raw = "&".join(part for part in (encoded, probe.raw_query) if part)
        target = probe.path + (f"?{raw}" if raw else "")
        escaped, logged = len(self.guard.escaped), len(self.errors.records)
        problems = len(self.store.problems)
        if probe.repeat:  # the first of two: what it finds is found in the second's lists, or here
            first = self.exchange(probe.method, target, pairs, jar, body)[0]
            if first is not None and first >= 500 and not (probe.unavailable and first == 503):
                self.guard.escaped.append(f"the first of two identical requests answered {first}")
        began = time.monotonic()
        status, answer, data, set_cookies = self.exchange(probe.method, target, pairs, jar, body)
        elapsed = time.monotonic() - began
        headers = joined(pairs)
        corpus = {":query": "?" + raw, ":decoded": unquote_plus(raw), ":cookies": "; ".join(jar), **headers}
        if values.document is not None and probe.document is not None:
            served = " ".join(f"{k}: {v}" for k, v in probe.document.headers)
            corpus[":document"] = f"HTTP {probe.document.status} {served}\n" + values.document.decode(
                "utf-8", "replace"
            )
        return FacadeOutcome(
            status,
            answer,
            data,
            corpus,
            body,
            None,
            method=probe.method,
            elapsed=elapsed,
            escaped=self.guard.escaped[escaped:],
            logged=self.errors.records[logged:],
            key_problems=self.store.problems[problems:],
            path=probe.path,
            family=probe.family,
            target=self.name,
            cookies=set_cookies,
            browser=cookie_parser("; ".join(jar)).get("lmcp_browser"),
            redirect_authorities=self.authorities | values.declared,
            secrets=[*self.secrets, *values.secrets],
            unavailable=probe.unavailable,
        )

    def body(self, body: Any, values: Values) -> bytes:
        if isinstance(body, Raw):
            return body.data
        if isinstance(body, Form):
            return urlencode([(name, values.fill(value)) for name, value in body.pairs]).encode()
        if isinstance(body, bytes):
            return body
        return json.dumps(body).encode()


class Values:
    """The real values of one probe, made on first use: a consent page's `txn` and the browser cookie
    bound to it, an approved sign-in's upstream `state`, a fresh code and its verifier, ..."""

    def __init__(self, target: FacadeTarget, probe: FacadeProbe) -> None:
        self.target = target
        self.client = probe.client if probe.client in target.clients else "public"
        self.web = self.client if self.client in ("web", "widest") else "web"
        """The client of a remembered consent (one that redirects to https)."""
        self.probe = probe
        self.made: dict[str, str] = {}
        self.document: bytes | None = None
        self.declared: frozenset[tuple[str, str]] = frozenset()
        """The authorities of the redirect URIs this probe's document declares."""
        self.secrets: list[str] = []
        """The credentials this probe presents (assertions, ID-JAGs, proofs, tokens, the operator secret)."""

    def fill(self, value: Any) -> str:
        if isinstance(value, Cat):
            return "".join(self.fill(part) for part in value.parts)
        if isinstance(value, Signed):
            access_token = self.real(value.token) if value.token else None
            made = self.target.agents.sign(
                value,
                method=self.probe.method,
                url=BASE + self.probe.path,
                access_token=access_token,
                nonce=self.target.nonce(),
            )
            self.secrets.append(made)
            return made
        if not isinstance(value, Ref):
            return str(value)
        return mangle(self.real(value.kind), value.mangle, value.pick)

    def real(self, kind: str) -> str:
        if kind not in self.made:
            self.make(kind)
        return self.made.get(kind, "")

    def make(self, kind: str) -> None:
        target, client = self.target, self.client
        registered = target.clients[client]
        if kind in SECRET_KINDS:
            self.made[kind] = self.machine(kind)
            self.secrets.append(self.made[kind])
        elif kind == "document":
            document = self.probe.document
            assert document is not None
            url = target.documents.publish(document, self.probe.client_url)
            self.made[kind] = url
            self.document = document.body.replace(SELF.encode(), url.encode("utf-8", "surrogatepass"))
            self.declared = declared_authorities(self.document)
        elif kind == "client_id":
            self.made[kind] = registered.client_id
        elif kind == "secret":
            self.made[kind] = registered.secret
        elif kind == "basic":
            self.made[kind] = basic(registered.client_id, registered.secret)
        elif kind == "redirect":
            self.made[kind] = registered.redirect
        elif kind == "consent":
            self.made[kind] = target.consent_cookie
        elif kind == "remembered-state":
            self.made[kind], self.made["browser"] = target.remembered_state(self.web)
        elif kind == "confirm-txn":
            self.made[kind], self.made["browser"] = target.confirm_page(self.web)
        elif kind in ("txn", "browser") and "state" not in self.made:
            self.made["txn"], self.made["browser"] = target.consent_page(client)
        elif kind == "state":
            self.made["state"], self.made["browser"] = target.upstream_state(client)
        elif kind in ("code", "verifier"):
            self.made["code"], self.made["verifier"], _ = target.sign_in(client)
        elif kind == "refresh":
            self.made[kind] = target.refresh_token(client)
        elif kind == "spent-txn":  # denied: the pending authorization is gone
            txn, browser = target.consent_page(client)
            target.call("POST", "/oauth/consent", form={"txn": txn, "decision": "deny"}, browser=browser)
            self.made[kind] = txn
            self.made.setdefault("browser", browser)
        elif kind == "spent-code":
            code, verifier, _ = target.sign_in(client)
            form = {"grant_type": "authorization_code", "code": code, "code_verifier": verifier}
            target.token(client, {**form, "redirect_uri": registered.redirect})
            self.made[kind] = code
            self.made.setdefault("verifier", verifier)
        elif kind == "spent-refresh":
            refresh = target.refresh_token(client)
            target.token(client, {"grant_type": "refresh_token", "refresh_token": refresh})
            self.made[kind] = refresh

    def machine(self, kind: str) -> str:
        target = self.target
        if kind == "operator-secret":
            return target.agents.secret
        if kind == "operator-basic":
            return basic("ci-job", target.agents.secret)
        if kind == "bound-refresh":
            return target.bound_refresh()
        if kind == "spent-id-jag":
            return target.spent_id_jag()
        return target.machine_token(kind)


SECRET_KINDS = frozenset({"bound-token", "enterprise-token", "unbound-token", "bound-refresh", "spent-id-jag"})
SECRET_KINDS |= {"operator-basic", "operator-secret"}
"""The `Ref`s of identity for agents: credentials, which no answer may echo."""


def joined(pairs: list[tuple[str, str]]) -> dict[str, str]:
    """Headers by name, a repeated one's values joined by commas (as API Gateway passes them)."""
    headers: dict[str, str] = {}
    for name, value in pairs:
        headers[name] = f"{headers[name]},{value}" if name in headers else value
    return headers


def declared_authorities(document: bytes) -> frozenset[tuple[str, str]]:
    """The authorities of the redirect URIs a metadata document declares (none when it declares none)."""
    try:
        declared = json.loads(document)
    except (ValueError, RecursionError):
        return frozenset()
    uris = declared.get("redirect_uris") if isinstance(declared, dict) else None
    return (
        frozenset(filter(None, (authority(u) for u in uris if isinstance(u, str))))
        if isinstance(uris, list)
        else frozenset()
    )


def unlimit(facade: Any) -> None:
    """Lift the facade's abuse limits (registrations, sign-ins and document fetches per address and
    window): every probe comes from one address, far more often than they allow."""
    limits = getattr(facade, "limits", None)
    if limits is not None and isinstance(getattr(limits, "limits", None), dict):
        limits.limits = dict.fromkeys(limits.limits, 10**9)
    clients = getattr(facade, "clients", None)
    if clients is not None and hasattr(clients, "registrations_per_window"):
        clients.registrations_per_window = 10**9


def basic(client_id: str, secret: str) -> str:
    pair = f"{quote_plus(client_id)}:{quote_plus(secret)}"
    return "Basic " + base64.b64encode(pair.encode()).decode()


def header_safe(value: str) -> str:
    """What an HTTP header can carry to API Gateway: no CR, LF or NUL."""
    return value.replace("\r", "").replace("\n", "").replace("\x00", "")


class StreamingFacadeTarget(FacadeTarget):
    """The same facade in the streaming server's app, called in-process over ASGI (as uvicorn would call
    it: no client library in between to refuse a long URL or an odd header)."""

    name = "streaming"
    streaming = True

    def connect(self) -> None:
        """Nothing to connect: `exchange` calls the app."""

    def exchange(
        self, method: str, target: str, headers: list[tuple[str, str]], cookies: list[str], body: bytes
    ) -> tuple[int | None, dict[str, str], bytes, list[str]]:
        sent = [(name.lower().encode(), value.encode()) for name, value in [("host", HOST), *headers]]
        if cookies:
            sent.append((b"cookie", "; ".join(cookies).encode()))
        path, _, query = target.partition("?")
        scope = {
            "type": "http",
            "asgi": {"version": "3.0"},
            "http_version": "1.1",
            "method": method,
            "scheme": "http",
            "path": unquote(path),
            "raw_path": path.encode(),
            "query_string": query.encode(),
            "root_path": "",
            "headers": sent,
            "server": ("127.0.0.1", 8000),
            "client": ("127.0.0.1", 50000),
        }
        try:
            return self.loop.run_until_complete(asyncio.wait_for(self._call(scope, body), ANSWER_SECONDS * 2))
        except TimeoutError:
            return None, {}, b"", []
        except Exception:  # escaped the app (recorded by the guard): a server answers 500
            return 500, {}, b"", []

    async def _call(self, scope: Scope, body: bytes) -> tuple[int | None, dict[str, str], bytes, list[str]]:
        status: int | None = None
        answer: dict[str, str] = {}
        set_cookies: list[str] = []
        chunks: list[bytes] = []
        received = False

        async def receive() -> Message:
            nonlocal received
            if received:
                await asyncio.sleep(3600)  # the client never disconnects while the app answers
            received = True
            return {"type": "http.request", "body": body, "more_body": False}

        async def send(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = int(message["status"])
                for name, value in message.get("headers", []):
                    key, text = name.decode("latin-1").lower(), value.decode("latin-1")
                    if key == "set-cookie":
                        set_cookies.append(text)
                    else:
                        answer[key] = f"{answer[key]},{text}" if key in answer else text
            elif message["type"] == "http.response.body":
                chunks.append(message.get("body", b""))

        await self.guard(scope, receive, send)
        return status, answer, b"".join(chunks), set_cookies


class NonceFacadeTarget(FacadeTarget):
    """The Lambda handler's facade asking for DPoP nonces (`LAMBDA_MCP_AUTH_DPOP_NONCE=on`): the probes'
    valid proofs carry the current one."""

    name = "lambda-nonce"
    extra = {"LAMBDA_MCP_AUTH_DPOP_NONCE": "on", "LAMBDA_MCP_STATE_KEY": "fuzz-nonce-state-key"}


TARGETS: dict[str, Callable[[], FacadeTarget]] = {
    "lambda": FacadeTarget,
    "streaming": StreamingFacadeTarget,
    "lambda-nonce": NonceFacadeTarget,
}
"""Where the facade fuzzer sends: the Lambda handler (where the deployed facade runs), the streaming
server, and the Lambda handler with DPoP nonces."""
