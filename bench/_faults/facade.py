"""Sign-ins and refreshes through the authorization facade under injected storage faults: the users it
signs out wrongly, and the codes it lets redeem twice: the scenario of `bench/faults.py --facade`.

The facade (`LAMBDA_MCP_AUTH=proxy`) is served by the Lambda handler in process (Mangum over the kit's
ASGI app, fed HTTP API events by tests/support/facade_events.py's `Browser`), its state in DynamoDB
Local behind the fault proxy (tests/support/fault_proxy.py), faulted as `bench/faults.py` faults the
tasks' table: each kind at `--fault-rate` per call on PutItem, UpdateItem, GetItem and DeleteItem,
and with `--past-retries` per distinct request on every attempt. The upstream is the stand-in of
tests/unit/test_facade_http.py (`FakeUpstream`); its check is due at every refresh
(`AUTH_UPSTREAM_CHECK_SECONDS=0`), so each refresh also rewrites the family after asking it. With
`--upstream-rotates` the stand-in rotates its refresh tokens and refuses a used one, as providers with
reuse detection do.

Each user behaves as a browser and a client do. They register a client, authorize, approve, come
back from the upstream and exchange the code; a step answered 503 is tried again as it was (a
reload, a resent form); a code exchange answered 503 is sent again once more, which the facade may
refuse as a replay by design. A sign-in sent back to the start (an "expired" page, or that refusal)
starts again from the authorization, up to 5 times. Then the refreshes, spread over the users: a
refresh answered 503, or whose answer the client lost (`--lost-rate`), is sent again with the same
token, which the facade's 30 s leeway must honour. `--replays` of the codes are presented a second
time after their tokens came: refused, and the sign-in they started ends, by design.

It reports:
- users signed out wrongly: a refresh answered `invalid_grant` though the client presented the
  token it held, or retried the one whose answer it never got; and, checked at the end without
  faults, sign-ins whose last token no longer refreshes;
- codes redeemed twice: a code that got tokens twice; and replays that did not end their sign-in;
- sign-ins sent back to the start, by step, and how many never finished;
- the 503s each step answered.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import secrets
import time
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qs, urlsplit

from bench._local import start_dynamodb_local

from .injection import KINDS, arm, requests_of, summary

WEB = "https://client.example/callback"
VERIFIER = "v" * 64
TRIES = 8
"""How often a client sends a request answered 503 before it gives up (well within the 30 s leeway)."""
RESTARTS = 5
PER_CALL = ("PutItem", "UpdateItem", "GetItem", "DeleteItem")
PAST = {"PutItem": KINDS, "UpdateItem": KINDS, "DeleteItem": KINDS, "GetItem": KINDS[:2]}


def rotating_upstream() -> Any:
    """The stand-in upstream, except that it rotates its refresh tokens and refuses one already used
    (`invalid_grant`), as providers with rotation and reuse detection do (oidc-provider rotates only a
    public client's, so the facade's own confidential client keeps one token there)."""
    import threading

    from lambda_mcp.facade.upstream import UpstreamError
    from tests.unit.test_facade_http import FakeUpstream

    class RotatingUpstream(FakeUpstream):
        current: dict[str, str]
        lock = threading.Lock()

        def exchange(self, code: str, verifier: str) -> dict[str, Any]:
            tokens = super().exchange(code, verifier)
            with self.lock:
                self.current = getattr(self, "current", {})
                self.current[code] = tokens["refresh_token"]
            return tokens

        def refresh(self, refresh_token: str) -> dict[str, Any]:
            user = refresh_token.split(":")[1]
            with self.lock:
                if self.current.get(user) != refresh_token:
                    self.refused += 1
                    raise UpstreamError("the upstream answered 400", "invalid_grant")
                tokens = super().refresh(refresh_token)
                self.current[user] = tokens["refresh_token"]
            return tokens

        refused = 0

    return RotatingUpstream()


def facade_row(operation: str, body: bytes) -> str | None:
    """The facade row a request touches (`FACADE#<kind>#<key>`): the journal's note."""
    if b'"FACADE#' not in body:
        return None
    request = json.loads(body)
    item = request.get("Item") or request.get("Key") or {}
    pk: str | None = item.get("pk", {}).get("S")
    return pk


@dataclass
class User:
    name: str
    browser: Any
    client_id: str | None = None
    token: str | None = None
    replayed: bool = False
    wrongly: str = ""
    """Why the facade signed this user out though the client did nothing wrong ("" while signed in)."""


@dataclass
class Tally:
    unavailable: Counter[str] = field(default_factory=Counter)
    """503s answered, by step."""
    restarts: Counter[str] = field(default_factory=Counter)
    wrongly: Counter[str] = field(default_factory=Counter)
    other: Counter[str] = field(default_factory=Counter)
    redeemed: Counter[str] = field(default_factory=Counter)
    """Token responses per code."""
    refreshes: int = 0
    lost: int = 0
    requests: int = 0
    rows: dict[str, list[str]] = field(default_factory=dict)
    """Examples of each odd outcome: the facade row to look up in the proxy's journal."""


class Rig:
    def __init__(self, handler: Any, tally: Tally) -> None:
        self.handler, self.tally = handler, tally

    def send(
        self, step: str, user: User, method: str, path: str, tries: int = TRIES, **kw: Any
    ) -> tuple[int, str, dict[str, Any]]:
        """One request; sent again as it was while it is answered 503 (at most `tries` times)."""
        from tests.support.facade_events import body_of

        for _ in range(tries):
            self.tally.requests += 1
            response = user.browser.request(method, path, **kw)
            status = int(response["statusCode"])
            if status != 503:
                return status, body_of(response), response
            self.tally.unavailable[step] += 1
        return 503, "", response

    def location(self, user: User, response: dict[str, Any]) -> dict[str, str]:
        url = user.browser.location(response)
        return {k: v[0] for k, v in parse_qs(urlsplit(url).query).items()}

    # -- signing in ----------------------------------------------------------------------------------------
    def sign_in(self, user: User, replay: bool) -> None:
        """Sign `user` in (starting again when sent back), then replay the code if asked to."""
        from tests.unit.test_facade_http import pkce, txn_of

        if user.client_id is None:
            document = {"redirect_uris": [WEB], "client_name": user.name, "token_endpoint_auth_method": "none"}
            status, text, _ = self.send("register", user, "POST", "/oauth/register", document=document)
            if status != 201:
                self.tally.other[f"register answered {status}"] += 1
                return
            user.client_id = json.loads(text)["client_id"]
        params = {
            "response_type": "code",
            "client_id": user.client_id,
            "redirect_uri": WEB,
            "code_challenge": pkce(VERIFIER),
            "code_challenge_method": "S256",
            "state": "st",
            "resource": f"https://{_domain()}/mcp",
        }
        for _ in range(RESTARTS):
            status, text, page = self.send("authorize", user, "GET", "/oauth/authorize", params=params)
            if status == 200:  # the consent page
                form = {"txn": txn_of(text), "decision": "approve", "confirm": "yes"}
                status, text, page = self.send("consent", user, "POST", "/oauth/consent", form=form)
            if status != 302:
                self._back("consent" if "expired" in text else f"authorize or consent answered {status}")
                continue
            state = self.location(user, page)["state"]
            query = {"code": user.name, "state": state}
            before = self.tally.unavailable["callback"]
            status, text, back = self.send("callback", user, "GET", "/oauth/callback", params=query)
            if status == 200 and 'name="txn"' in text:  # a remembered consent asks to confirm
                form = {"txn": txn_of(text), "decision": "approve", "confirm": "yes"}
                status, text, back = self.send("consent", user, "POST", "/oauth/consent", form=form)
            if status != 302 or "code" not in self.location(user, back):
                after_503 = self.tally.unavailable["callback"] > before
                why = f"callback: {'expired' if 'expired' in text else status}{' after a 503' * after_503}"
                self._back(why, f"FACADE#pending#{state}")
                continue
            code = self.location(user, back)["code"]
            if not self._exchange(user, code):
                continue
            if replay:
                self._replay(user, code)
            return
        self.tally.other["sign-ins that never finished (5 starts)"] += 1

    def _back(self, why: str, row: str = "") -> None:
        self.tally.restarts[why] += 1
        if row:
            self.tally.rows.setdefault(why, []).append(row)

    def _exchange(self, user: User, code: str) -> bool:
        form = {
            "grant_type": "authorization_code",
            "code": code,
            "client_id": user.client_id,
            "code_verifier": VERIFIER,
            "redirect_uri": WEB,
        }
        from lambda_mcp.facade.hashing import digest

        row = f"FACADE#code#{digest(code)}"
        for attempt in range(2):  # a 503, then the same exchange once more: a replay, by design
            status, text, _ = self.send("exchange", user, "POST", "/oauth/token", tries=1, form=form)
            if status == 200:
                self.tally.redeemed[code] += 1
                user.token = json.loads(text).get("refresh_token")
                return True
            if status != 503:
                self._back(f"exchange: {_error(text) or status}{' after a 503' * attempt}", row)
                return False
        self._back("exchange: 503 twice", row)
        return False

    def _replay(self, user: User, code: str) -> None:
        """The code presented again after its tokens came: refused, and its sign-in ends (RFC 6749 §4.1.2)."""
        user.replayed = True
        form = {
            "grant_type": "authorization_code",
            "code": code,
            "client_id": user.client_id,
            "code_verifier": VERIFIER,
            "redirect_uri": WEB,
        }
        status, text, _ = self.send("replay", user, "POST", "/oauth/token", form=form)
        if status == 200:
            self.tally.redeemed[code] += 1
        refresh = {"grant_type": "refresh_token", "refresh_token": user.token or "", "client_id": user.client_id}
        status, text, _ = self.send("refresh after a replay", user, "POST", "/oauth/token", form=refresh)
        if status == 200:
            why = "replays that did not end their sign-in"
            self.tally.other[why] += 1
            self.tally.rows.setdefault(why, []).append(f"FACADE#family#{(user.token or '').partition('.')[0]}")

    # -- refreshing ------------------------------------------------------------------------------------------
    def refresh(self, user: User, lost_rate: float) -> None:
        from tests.support.facade_events import body_of

        presented = user.token or ""
        lost_answer: str | None = None
        for attempt in range(TRIES):
            self.tally.requests += 1
            form = {"grant_type": "refresh_token", "refresh_token": presented, "client_id": user.client_id}
            response = user.browser.request("POST", "/oauth/token", form=form)
            status = int(response["statusCode"])
            text = body_of(response)
            if status == 503:
                self.tally.unavailable["refresh"] += 1
                continue
            if status == 200:
                successor = json.loads(text)["refresh_token"]
                if lost_answer is not None and successor != lost_answer:
                    self.tally.other["a retry after a lost answer got another successor"] += 1
                if attempt < TRIES - 1 and random.random() < lost_rate:  # the answer never reached the client
                    self.tally.lost += 1
                    lost_answer = successor
                    continue
                user.token = successor
                self.tally.refreshes += 1
                return
            error = _error(text)
            if error == "invalid_grant":
                cause = "after a lost answer" if lost_answer else "after a 503" if attempt else "at the first try"
                user.wrongly = f"refresh refused {cause}"
                self.tally.wrongly[user.wrongly] += 1
                return
            self.tally.other[f"refresh answered {status} {error}"] += 1
            return
        self.tally.other["refreshes answered 503 every time"] += 1


def _error(text: str) -> str:
    with contextlib.suppress(ValueError):
        return str(json.loads(text).get("error", ""))
    return ""


def _domain() -> str:
    from tests.support.facade_events import DOMAIN

    return DOMAIN


def run_facade(args: argparse.Namespace, stack: contextlib.ExitStack) -> str:
    import boto3
    from mangum import Mangum

    from lambda_mcp.kit import build_kit
    from lambda_mcp.loader import load_app
    from lambda_mcp.storage.dynamodb import create_table
    from tests.support.facade_events import Browser
    from tests.support.fault_proxy import FaultProxy
    from tests.unit.test_facade_http import FakeUpstream, settings

    dynamodb = start_dynamodb_local(stack)
    table = f"facade-faults-{secrets.token_hex(4)}"
    create_table(boto3.client("dynamodb", endpoint_url=dynamodb), table)
    proxy = FaultProxy(dynamodb, seed=args.seed, note=facade_row)
    stack.callback(proxy.stop)
    os.environ["AWS_ENDPOINT_URL_DYNAMODB"] = proxy.url
    environment = {
        "LAMBDA_MCP_AUTH_AUDIENCE": f"https://{_domain()}/mcp",
        "LAMBDA_MCP_STATE_KEY": "k" * 32,
        "LAMBDA_MCP_TABLE_NAME": table,
        "LAMBDA_MCP_AUTH_UPSTREAM_CHECK_SECONDS": "0",
    }
    kit = build_kit(load_app(str(_root() / "tests/apps/scoped.py")), settings(**environment), streaming=False)
    assert kit.facade is not None
    upstream = rotating_upstream() if args.upstream_rotates else FakeUpstream()
    kit.facade.upstream = upstream  # type: ignore[assignment]
    handler = Mangum(kit.asgi(), lifespan="off")
    tally = Tally()
    rig = Rig(handler, tally)
    users = [
        User(f"user{index:04d}", Browser("http", handler, source_ip=f"10.{index // 250}.{index % 250}.7"))
        for index in range(args.sign_ins)
    ]
    arm(proxy, "dynamodb", args.fault_rate, args.past_retries, PER_CALL, PAST, args.past_rate)
    started = time.monotonic()
    for user in users:
        rig.sign_in(user, random.random() < args.replays)
    signed_in_in = time.monotonic() - started
    refreshing = [user for user in users if user.token and not user.replayed]
    for _ in range(args.refreshes if refreshing else 0):
        user = random.choice(refreshing)
        if user.wrongly:
            tally.other["refreshes not made: the user was signed out"] += 1
            continue
        rig.refresh(user, args.lost_rate)
    refreshed_in = time.monotonic() - started - signed_in_in
    proxy.clear()
    for user in refreshing:  # without faults: does each sign-in still refresh?
        if not user.wrongly:
            form = {"grant_type": "refresh_token", "refresh_token": user.token, "client_id": user.client_id}
            if user.browser.request("POST", "/oauth/token", form=form)["statusCode"] != 200:
                user.wrongly = "its last token no longer refreshes (checked at the end, without faults)"
                tally.wrongly[user.wrongly] += 1
    if args.upstream_rotates:
        tally.other["upstream refreshes refused as a reuse"] = getattr(upstream, "refused", 0)
    return _report(args, users, tally, proxy, signed_in_in, refreshed_in)


def _root() -> Any:
    from pathlib import Path

    return Path(__file__).resolve().parents[2]


def _report(
    args: argparse.Namespace, users: list[User], tally: Tally, proxy: Any, signed_in_in: float, refreshed_in: float
) -> str:
    signed_in = [user for user in users if user.token]
    twice = [code for code, n in tally.redeemed.items() if n > 1]
    wrongly = [user for user in users if user.wrongly]
    mode = "per call" + (f" and, past the retries, at {args.past_rate:.0%} per request" if args.past_retries else "")
    injected = sorted(proxy.injected.items(), key=lambda kv: -kv[1])
    lines = [
        f"sign-ins: {len(signed_in)} of {len(users)} users signed in in {signed_in_in:.0f} s"
        f" ({sum(user.replayed for user in users)} of their codes presented again after the tokens came);"
        f" refreshes: {tally.refreshes} in {refreshed_in:.0f} s ({tally.lost} answers lost and retried);"
        f" {tally.requests} requests",
        f"faults: each kind at {args.fault_rate:.0%} {mode} on DynamoDB {', '.join(PER_CALL)}",
        "injected (attempts): " + ", ".join(f"{k} {v}" for k, v in injected[:12]),
        "503s answered, by step: " + ", ".join(f"{k} {v}" for k, v in tally.unavailable.most_common()),
        f"USERS SIGNED OUT WRONGLY: {len(wrongly)} " + str(dict(tally.wrongly)),
        f"CODES REDEEMED TWICE: {len(twice)}",
        "sign-ins sent back to the start: " + (", ".join(f"{k} {v}" for k, v in tally.restarts.items()) or "0"),
        "other: " + (", ".join(f"{k} {v}" for k, v in tally.other.items()) or "none"),
    ]
    rows: dict[str, list[list[Any]]] = defaultdict(list)
    for attempts in requests_of(proxy.journal).values():
        rows[attempts[0].note].append(attempts)

    def journal(row: str) -> None:
        for attempts in [a for a in rows.get(row, []) if any(s.status >= 300 for s in a)][-4:]:
            lines.append(f"      {summary(attempts)}")

    for user in wrongly[:20]:
        family = (user.token or "").partition(".")[0]
        lines.append(f"  {user.name} ({user.wrongly}): family {family[:8]}…")
        journal(f"FACADE#family#{family}")
    for why, examples in tally.rows.items():
        for row in examples[:3]:
            lines.append(f"  {why}: {row[:40]}…")
            journal(row)
    return "\n".join(lines)
