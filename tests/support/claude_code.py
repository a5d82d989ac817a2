"""Claude Code (npm `@anthropic-ai/claude-code`, which scripts/test installs into .cache/claude-code) as an MCP
client in tests: its configuration and credentials kept in a folder of the test's own, an environment of
its own (nothing of the caller's, no Anthropic key, no traffic but the MCP server's), and
`claude mcp login` run under a pseudo-terminal, since it refuses to sign in without one. Only the
`claude mcp` commands run: none calls a model.
"""

from __future__ import annotations

import json
import os
import pty
import re
import select
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from .processes import ROOT

CLAUDE = ROOT / ".cache/claude-code/node_modules/@anthropic-ai/claude-code/bin/claude.exe"
_ESCAPES = re.compile(r"\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b\[[0-9;?]*[ -/]*[@-~]")
"""Terminal escapes: OSC (the hyperlink around a URL) and CSI (colours, cursor moves)."""


class ClaudeCode:
    """`claude` with its home, `CLAUDE_CONFIG_DIR` and working directory in `folder`, and `env` added
    (`BROWSER`, for one: the program `claude mcp login` opens the authorization URL with)."""

    def __init__(self, folder: Path, **env: str) -> None:
        if not CLAUDE.exists():
            pytest.fail("Claude Code is not installed: run ./scripts/test (it installs it into .cache/claude-code)")
        self.folder = folder
        self.config = folder / "config"
        for path in (folder / "home", self.config):
            path.mkdir(parents=True, exist_ok=True)
        self.env = {
            "PATH": "/usr/local/bin:/usr/bin:/bin",
            "HOME": str(folder / "home"),
            "CLAUDE_CONFIG_DIR": str(self.config),
            "TERM": "xterm-256color",
            "LANG": "C.UTF-8",
            # No update checks, telemetry, error reports or other traffic to Anthropic (the first implies
            # the other three; they are named too, in case a release reads them alone).
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            "DISABLE_AUTOUPDATER": "1",
            "DISABLE_TELEMETRY": "1",
            "DISABLE_ERROR_REPORTING": "1",
            **env,
        }

    def run(self, *args: str, timeout: float = 30) -> str:
        """`claude ARGS` without a terminal; its output (stdout then stderr), which must end in success."""
        done = subprocess.run(
            [str(CLAUDE), *args],
            cwd=self.folder,
            env=self.env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=timeout,
        )
        output = done.stdout + done.stderr
        assert done.returncode == 0, f"claude {' '.join(args)} exited with {done.returncode}: {output}"
        return output

    def login(self, name: str, timeout: float = 45) -> tuple[int, str]:
        """`claude mcp login NAME` on a pseudo-terminal, until it exits: its exit status and what it wrote
        (terminal escapes removed). The browser it opens must deliver the redirect to its loopback
        listener; nothing is typed at its prompt."""
        main, child = pty.openpty()
        process = subprocess.Popen(
            [str(CLAUDE), "mcp", "login", name],
            cwd=self.folder,
            env=self.env,
            stdin=child,
            stdout=child,
            stderr=child,
            start_new_session=True,
        )
        os.close(child)
        written = bytearray()
        deadline = time.monotonic() + timeout
        try:
            while True:
                if time.monotonic() > deadline:
                    pytest.fail(f"claude mcp login {name} ran over {timeout:g} s: {_text(written)}")
                ready, _, _ = select.select([main], [], [], 0.1)
                chunk = _read(main) if ready else b""
                written += chunk
                if not chunk and process.poll() is not None:
                    break
        finally:
            if process.poll() is None:
                process.terminate()
                process.wait(timeout=5)
            os.close(main)
        return process.returncode, _text(written)

    def credentials(self) -> dict[str, Any]:
        """What Claude Code keeps of its sign-ins: `.credentials.json` in its configuration folder (on
        Linux, with no keychain)."""
        return dict(json.loads((self.config / ".credentials.json").read_text()))


def _read(fd: int) -> bytes:
    try:
        return os.read(fd, 65536)
    except OSError:  # EIO: every process on the terminal's other side has closed it
        return b""


def _text(written: bytes | bytearray) -> str:
    return _ESCAPES.sub("", written.decode(errors="replace"))
