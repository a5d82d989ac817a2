"""`LAMBDA_MCP_AUTH=proxy` under `lambda-mcp dev`, with nothing else set: the settings a deployment
names are filled in for this run, in the environment (so that `dev --lambda`'s handlers and a
`--reload` child read them as the deployed function reads its own).

- the audience: the dev server's own URL (`http://127.0.0.1:<port>/mcp`, a REST API's stage included);
- the facade's signing key: a P-256 key made for this run;
- the upstream, when no `LAMBDA_MCP_AUTH_UPSTREAM_*` setting is given: the development sign-in
  (local/idp.py), which the dev server serves on its own port. Loopback only.

Whatever is set is kept. PyJWT and cryptography are looked for first, so that a missing `auth` extra is
one line naming it, not a traceback from making the key.
"""

from __future__ import annotations

import ipaddress
import os
from collections.abc import MutableMapping

from ..config import DEV_SIGN_IN_PATH, PREFIX, require_auth_packages
from .usage import UsageError

UPSTREAM = ("ISSUER", "CLIENT_ID", "CLIENT_SECRET", "CLIENT_SECRET_ARN")


def is_loopback(host: str) -> bool:
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def base_url(host: str, port: int) -> str:
    """`http://HOST:PORT`, an IPv6 address in brackets."""
    host = host.strip("[]")
    return f"http://[{host}]:{port}" if ":" in host else f"http://{host}:{port}"


def prepare(host: str, port: int, path: str = "/mcp", environ: MutableMapping[str, str] | None = None) -> None:
    """Fill in what `proxy` lacks for a dev server on `host:port` serving MCP at `path` (other auth modes:
    nothing; `jwt` has its packages looked for)."""
    env = os.environ if environ is None else environ
    mode = env.get(f"{PREFIX}AUTH", "").strip().lower()
    if mode in ("jwt", "proxy"):
        require_auth_packages(mode)
    if mode != "proxy":
        return
    base = base_url(host, port)
    loopback = is_loopback(host)
    if loopback and not (env.get(f"{PREFIX}AUTH_AUDIENCE") or env.get(f"{PREFIX}RESOURCE_URL")):
        env[f"{PREFIX}AUTH_AUDIENCE"] = base + path
    if not (env.get(f"{PREFIX}AUTH_SIGNING_KEY") or env.get(f"{PREFIX}AUTH_SIGNING_KEY_ID")):
        from ..facade.signing import generate_pem

        env[f"{PREFIX}AUTH_SIGNING_KEY"] = generate_pem()
    if any(env.get(f"{PREFIX}AUTH_UPSTREAM_{name}") for name in UPSTREAM):
        return
    if not loopback:
        raise UsageError(
            f"the development sign-in serves loopback only, not --host {host}: set {PREFIX}AUTH_AUDIENCE (the URL"
            f" clients use) and the {PREFIX}AUTH_UPSTREAM_* settings of an identity provider, or listen on 127.0.0.1"
        )
    from . import idp

    env.update(idp.settings_for(base))


def banner(base: str) -> str:
    """The dev servers' line saying that the development sign-in is the facade's upstream."""
    return (
        f"lambda-mcp dev: sign-in at {base}{DEV_SIGN_IN_PATH} is for development only (any username, no password);"
        f" a deployment signs users in with its identity provider ({PREFIX}AUTH_UPSTREAM_*)"
    )
