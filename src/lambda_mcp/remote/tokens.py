"""Where `--login` keeps what a sign-in got: one JSON file, `tokens.json` in the user's config directory
(`$LAMBDA_MCP_CONFIG_DIR`, else `$XDG_CONFIG_HOME/lambda-mcp`, else `~/.config/lambda-mcp`; on Windows
`%APPDATA%\\lambda-mcp`), readable by the user alone (mode 0600, in a 0700 directory).

It holds one entry per MCP server URL, as typed on the command line: the authorization server (issuer and
token endpoint), the client it registered (its id, its secret if the server issued one, its redirect URI)
and the tokens (access token, refresh token, expiry as a Unix time). A write replaces the whole file
atomically, so a reader never sees half of one. Deleting the file, or an entry, signs the CLI out.
"""

from __future__ import annotations

import json
import os
import secrets
import sys
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import Any

FILE_NAME = "tokens.json"
FORMAT = 1


def config_dir() -> Path:
    """The CLI's configuration directory (see the module docstring)."""
    chosen = os.environ.get("LAMBDA_MCP_CONFIG_DIR")
    if chosen:
        return Path(chosen).expanduser()
    if sys.platform == "win32":
        return Path(os.environ.get("APPDATA") or Path.home() / "AppData" / "Roaming") / "lambda-mcp"
    return Path(os.environ.get("XDG_CONFIG_HOME") or Path.home() / ".config") / "lambda-mcp"


@dataclass(frozen=True)
class Saved:
    """One server's sign-in."""

    issuer: str
    token_endpoint: str
    client_id: str
    redirect_uri: str
    access_token: str = ""
    refresh_token: str | None = None
    expires_at: float | None = None
    """Unix time; None when the authorization server did not say."""
    client_secret: str | None = None
    auth_method: str = "none"
    """How the client authenticates at the token endpoint: none, client_secret_post or client_secret_basic."""
    resource: str = ""
    """The `resource` the tokens are for (RFC 8707), from the server's protected resource metadata."""
    scope: str | None = None

    def fresh(self, now: float, margin: float = 30.0) -> bool:
        """Whether the access token is there and not about to expire."""
        return bool(self.access_token) and (self.expires_at is None or self.expires_at - margin > now)

    @classmethod
    def from_json(cls, entry: Any) -> Saved | None:
        """An entry as the file holds it; None when it is not one (an older or hand-edited file)."""
        if not isinstance(entry, dict):
            return None
        known = {field.name for field in fields(cls)}
        try:
            return cls(**{key: value for key, value in entry.items() if key in known})
        except TypeError:
            return None


class TokenFile:
    """The token cache at `path` (default: `tokens.json` in `config_dir()`)."""

    def __init__(self, path: Path | None = None) -> None:
        self.path = path or config_dir() / FILE_NAME

    def get(self, url: str) -> Saved | None:
        return Saved.from_json(self._read().get(url))

    def put(self, url: str, saved: Saved) -> None:
        servers = self._read()
        servers[url] = asdict(saved)
        self._write(servers)

    def drop(self, url: str) -> None:
        servers = self._read()
        if servers.pop(url, None) is not None:
            self._write(servers)

    def _read(self) -> dict[str, Any]:
        try:
            document = json.loads(self.path.read_text())
        except (OSError, ValueError):
            return {}  # none yet, or unreadable: the next write replaces it
        servers = document.get("servers") if isinstance(document, dict) else None
        return dict(servers) if isinstance(servers, dict) else {}

    def _write(self, servers: dict[str, Any]) -> None:
        self.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        temporary = self.path.with_name(f".{FILE_NAME}.{os.getpid()}.{secrets.token_hex(4)}")
        descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        try:
            with os.fdopen(descriptor, "w") as handle:
                json.dump({"format": FORMAT, "servers": servers}, handle, indent=2)
                handle.write("\n")
            os.replace(temporary, self.path)
        except BaseException:
            temporary.unlink(missing_ok=True)
            raise
