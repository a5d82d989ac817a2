"""`--login`: a token for an OAuth-protected MCP server, from the cache, by refreshing, or by a browser
sign-in (OAuth 2.1 authorization code with PKCE, the way a native app does it: RFC 8252).

The sign-in starts from the server's 401: its challenge leads to the authorization server
(`oauth.discover`). The client is the one registered before for this server when its redirect port is
still free, else a new registration (DCR), or the client ID metadata document given with
`--client-metadata` (CIMD). A listener on 127.0.0.1 takes the redirect; the browser is opened with
Python's `webbrowser`, which honours `$BROWSER`, and the address is printed for when none opens. The
code is exchanged for tokens, which are saved (`tokens.TokenFile`) and refreshed when they expire or
the server refuses them; a refresh the authorization server refuses means a new sign-in.
"""

from __future__ import annotations

import contextlib
import html
import os
import secrets
import sys
import threading
import time
import webbrowser
from collections.abc import Callable, Iterator
from dataclasses import replace
from http.server import BaseHTTPRequestHandler, HTTPServer
from typing import Any, TextIO
from urllib.parse import parse_qs, urlencode, urlsplit, urlunsplit

import httpx

from .failures import RemoteFailure, one_line
from .oauth import AuthorizationServer, Client, Refused, discover, document_redirect, pkce, register, token_request
from .tokens import Saved, TokenFile

SIGN_IN_SECONDS = 300.0
CALLBACK_PATH = "/callback"


class Login:
    """Tokens for the MCP server at `url`."""

    def __init__(
        self,
        url: str,
        *,
        client_metadata: str | None = None,
        timeout: float = 30.0,
        stderr: TextIO = sys.stderr,
        store: TokenFile | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.url = url
        self.client_metadata = client_metadata
        self.timeout = timeout
        self.stderr = stderr
        self.store = store or TokenFile()
        self.clock = clock
        self._refreshed = False
        self.signed_in = False
        """Whether this run signed in with the browser (a token from it that is refused is not retried)."""

    def saved(self) -> str | None:
        """The saved access token, refreshed first if it expired; None when there is none to use."""
        saved = self.store.get(self.url)
        if saved is None:
            return None
        if saved.fresh(self.clock()):
            return saved.access_token
        return self._refresh(saved)

    def renewed(self, challenge: str) -> str:
        """A new token after the server refused the last one (or there was none): refreshed, else signed in."""
        saved = self.store.get(self.url)
        if saved is not None and not self._refreshed:
            token = self._refresh(saved)
            if token is not None:
                return token
        return self._sign_in(challenge)

    # -- refresh -----------------------------------------------------------------------------------------
    def _refresh(self, saved: Saved) -> str | None:
        self._refreshed = True
        if not saved.refresh_token:
            return None
        form = {"grant_type": "refresh_token", "refresh_token": saved.refresh_token}
        if saved.resource:
            form["resource"] = saved.resource
        client = Client(saved.client_id, saved.client_secret, saved.auth_method)
        try:
            with httpx.Client(timeout=self.timeout) as http:
                answer = token_request(http, saved.token_endpoint, client, form)
        except Refused:
            self.store.put(self.url, replace(saved, access_token="", refresh_token=None))
            return None  # ended, revoked or expired: sign in again
        self._save(saved, answer)
        return str(answer["access_token"])

    def _save(self, base: Saved, answer: dict[str, Any]) -> None:
        expires_in = answer.get("expires_in")
        lifetime = (
            float(expires_in) if isinstance(expires_in, int | float) and not isinstance(expires_in, bool) else None
        )
        refresh = answer.get("refresh_token")
        self.store.put(
            self.url,
            replace(
                base,
                access_token=str(answer["access_token"]),
                refresh_token=refresh if isinstance(refresh, str) else base.refresh_token,
                expires_at=self.clock() + lifetime if lifetime is not None else None,
                scope=str(answer["scope"]) if isinstance(answer.get("scope"), str) else base.scope,
            ),
        )

    # -- sign-in -----------------------------------------------------------------------------------------
    def _sign_in(self, challenge: str) -> str:
        with httpx.Client(timeout=self.timeout) as http:
            server = discover(http, self.url, challenge)
            previous = self.store.get(self.url)
            redirect = document_redirect(http, server, self.client_metadata) if self.client_metadata else None
            reused = previous if previous is not None and previous.issuer == server.issuer else None
            port = _port(redirect or (reused.redirect_uri if reused and not self.client_metadata else ""))
            path = (urlsplit(redirect).path or CALLBACK_PATH) if redirect else CALLBACK_PATH
            with Callback(port, path, fixed=redirect is not None and urlsplit(redirect).port is not None) as callback:
                if self.client_metadata:
                    client = Client(self.client_metadata)
                elif reused is not None and reused.redirect_uri == callback.redirect_uri:
                    client = Client(reused.client_id, reused.client_secret, reused.auth_method)
                else:
                    client = register(http, server, callback.redirect_uri)
                verifier, code = self._authorize(server, client, callback)
            form = {"grant_type": "authorization_code", "code": code, "redirect_uri": callback.redirect_uri}
            form |= {"code_verifier": verifier, "resource": server.resource}
            answer = token_request(http, server.endpoint("token_endpoint"), client, form)
        base = Saved(
            issuer=server.issuer,
            token_endpoint=server.endpoint("token_endpoint"),
            client_id=client.client_id,
            redirect_uri=callback.redirect_uri,
            client_secret=client.client_secret,
            auth_method=client.auth_method,
            resource=server.resource,
            scope=server.scope,
        )
        self._save(base, answer)
        self.signed_in = True
        print(f"Signed in; the token is saved in {self.store.path}", file=self.stderr, flush=True)
        return str(answer["access_token"])

    def _authorize(self, server: AuthorizationServer, client: Client, callback: Callback) -> tuple[str, str]:
        """Send the user's browser to the authorization endpoint; the PKCE verifier and the code it brings back."""
        verifier, challenge = pkce()
        state = secrets.token_urlsafe(24)
        query = {
            "response_type": "code",
            "client_id": client.client_id,
            "redirect_uri": callback.redirect_uri,
            "code_challenge": challenge,
            "code_challenge_method": "S256",
            "state": state,
            "resource": server.resource,
        }
        if server.scope:
            query["scope"] = server.scope
        address = _with_query(server.endpoint("authorization_endpoint"), query)
        print(f"Signing in to {self.url} at {server.issuer} in your browser.", file=self.stderr)
        print(f"If no browser opens, visit: {address}", file=self.stderr, flush=True)
        callback.expect(state)
        with contextlib.suppress(webbrowser.Error), _stdout_to_stderr():  # no browser: the address is printed
            webbrowser.open(address)
        answer = callback.wait(SIGN_IN_SECONDS)
        if "error" in answer:
            described = one_line(answer.get("error_description", ""), 200)
            raise RemoteFailure(
                f"--login: the sign-in was refused: {answer['error']}{' (' + described + ')' if described else ''}"
            )
        issuer = answer.get("iss")
        if issuer is not None and issuer.rstrip("/") != server.issuer.rstrip("/"):  # RFC 9207: not a mix-up
            raise RemoteFailure(f"--login: the sign-in came back from {issuer!r}, not {server.issuer}")
        if not answer.get("code"):
            raise RemoteFailure("--login: the sign-in came back without a code")
        return verifier, answer["code"]


@contextlib.contextmanager
def _stdout_to_stderr() -> Iterator[None]:
    """File descriptor 1 is stderr's while the browser starts: what it prints stays off the result (stdout)."""
    sys.stdout.flush()
    saved = os.dup(1)
    os.dup2(2, 1)
    try:
        yield
    finally:
        os.dup2(saved, 1)
        os.close(saved)


def _port(uri: str) -> int:
    try:
        return urlsplit(uri).port or 0 if uri else 0
    except ValueError:
        return 0


def _with_query(uri: str, params: dict[str, str]) -> str:
    parts = urlsplit(uri)
    query = "&".join(filter(None, [parts.query, urlencode(params)]))
    return urlunsplit((parts.scheme, parts.netloc, parts.path, query, ""))


class Callback:
    """The redirect URI's listener: `http://127.0.0.1:PORT/PATH` (`port` 0: any free one; a port taken by
    another program is replaced by a free one unless `fixed`)."""

    def __init__(self, port: int, path: str, *, fixed: bool = False) -> None:
        self.path = path
        self._state = secrets.token_bytes(32)  # until `expect`: no redirect matches
        self._answer: dict[str, str] = {}
        self._arrived = threading.Event()
        try:
            self._server = HTTPServer(("127.0.0.1", port), _handler(self))
        except OSError:
            if fixed or port == 0:
                raise RemoteFailure(f"--login cannot listen on 127.0.0.1:{port} for the sign-in's redirect") from None
            self._server = HTTPServer(("127.0.0.1", 0), _handler(self))
        self.redirect_uri = f"http://127.0.0.1:{self._server.server_address[1]}{path}"
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.1}, daemon=True)

    def __enter__(self) -> Callback:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()

    def expect(self, state: str) -> None:
        """The `state` of the sign-in under way: a redirect without it is not this sign-in's, and is ignored."""
        self._state = state.encode()

    def arrived(self, query: dict[str, str]) -> bool:
        """Take a redirect's query; whether it is this sign-in's."""
        if not secrets.compare_digest(query.get("state", "").encode(), self._state):
            return False
        self._answer = query
        self._arrived.set()
        return True

    def wait(self, seconds: float) -> dict[str, str]:
        """The query parameters of this sign-in's redirect; RemoteFailure after `seconds`."""
        deadline = time.monotonic() + seconds
        while not self._arrived.wait(min(0.2, max(0.0, deadline - time.monotonic()))):
            if time.monotonic() >= deadline:
                raise RemoteFailure(f"--login: no sign-in came back within {int(seconds)} s; run the command again")
        return self._answer


def _handler(callback: Callback) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 - http.server's name
            parts = urlsplit(self.path)
            if parts.path != callback.path:
                self._page(404, "Not found", "This address only takes the sign-in's redirect.")
                return
            query = {name: values[0] for name, values in parse_qs(parts.query).items()}
            if not callback.arrived(query):
                self._page(400, "Not this sign-in", "This redirect does not belong to the sign-in under way.")
            elif "error" in query:
                self._page(200, "Sign-in refused", f"The sign-in ended with {query['error']}.")
            else:
                self._page(200, "Signed in", "You can close this tab and go back to the terminal.")

        def _page(self, status: int, title: str, text: str) -> None:
            body = (
                f"<!doctype html><meta charset=utf-8><title>{html.escape(title)}</title>"
                f"<h1>{html.escape(title)}</h1><p>{html.escape(text)}</p>"
            ).encode()
            self.send_response(status)
            self.send_header("content-type", "text/html; charset=utf-8")
            self.send_header("content-length", str(len(body)))
            self.send_header("cache-control", "no-store")
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:
            return

    return Handler
