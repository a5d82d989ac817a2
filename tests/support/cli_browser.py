"""A browser for `lambda-mcp ... --login` in tests: the program `$BROWSER` names (through `browser_command`),
which Python's `webbrowser` runs with the authorization URL. It walks the facade's consent page and the
upstream's login over HTTP (`upstream.sign_in`), as `$LAMBDA_MCP_TEST_USER` answering
`$LAMBDA_MCP_TEST_DECISION` (approve by default), then delivers the redirect to the CLI's loopback
listener, as a browser would. Each URL it was opened with is appended to `$LAMBDA_MCP_TEST_BROWSER_LOG`."""

from __future__ import annotations

import os
import stat
import sys
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import httpx

from tests.support.processes import ROOT
from tests.support.upstream import sign_in

LOG = "LAMBDA_MCP_TEST_BROWSER_LOG"


def browser_command(folder: Path) -> str:
    """An executable in `folder` that runs this module with the test environment's Python (`$BROWSER`)."""
    script = folder / "browser"
    script.write_text(f'#!/bin/sh\nPYTHONPATH="{ROOT}" exec "{sys.executable}" -m tests.support.cli_browser "$@"\n')
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    return str(script)


def opened(log: Path) -> list[dict[str, str]]:
    """The query of each authorization URL the browser was opened with, in order."""
    if not log.exists():
        return []
    urls = [line for line in log.read_text().splitlines() if line]
    return [{name: values[0] for name, values in parse_qs(urlsplit(url).query).items()} for url in urls]


def main(url: str) -> None:
    print(f"a browser's chatter on its stdout: opening {url}")  # it must not reach the CLI's stdout
    with open(os.environ[LOG], "a") as log:
        log.write(url + "\n")
    redirect_uri = parse_qs(urlsplit(url).query)["redirect_uri"][0]
    user, decision = os.environ.get("LAMBDA_MCP_TEST_USER", "alice"), os.environ.get("LAMBDA_MCP_TEST_DECISION")
    walked = sign_in(url, redirect_uri=redirect_uri, user=user, decision=decision or "approve")
    httpx.get(walked.location, timeout=10).raise_for_status()  # the CLI's listener takes the code


if __name__ == "__main__":
    main(sys.argv[1])
