"""The code blocks of the docs, and a shell block as a script a test runs as it is written.

A shell block is run literally, line by line as bash runs it, with two exceptions a user would make too:
`lambda-mcp dev ...` serves until Ctrl-C, so it runs in the background (on a free port, until the script ends)
while the next lines run, as in a second terminal; and a line that deploys (`sam deploy`) needs an AWS account,
so it is echoed, not run. `script` returns the lines it did not run, so a test can check it skipped only those.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

BLOCK = re.compile(r"^```(\w*)\n(.*?)^```", re.MULTILINE | re.DOTALL)
HEADING = re.compile(r"^(#+) (.*)$", re.MULTILINE)
SCRIPT_GUARD = 'if __name__ == "__main__":'
"""A Python block with this line is a script (run on its own), not a part of the guide's namespace."""


def blocks(markdown: Path, language: str, section: str | None = None) -> list[str]:
    """The `language` blocks of a markdown file, in order; with `section`, only those under that heading
    (up to the next heading of the same or a higher level)."""
    text = markdown.read_text()
    if section is not None:
        headings = list(HEADING.finditer(text))
        (start,) = [h for h in headings if h.group(2).strip() == section]
        level = len(start.group(1))
        end = next((h.start() for h in headings if h.start() > start.start() and len(h.group(1)) <= level), None)
        text = text[start.end() : end]
    return [code for lang, code in BLOCK.findall(text) if lang == language]


@dataclass(frozen=True)
class Script:
    text: str
    """The bash script: the block's lines, `lambda-mcp dev` backgrounded on a port, deploys echoed."""
    skipped: list[str]
    """The block's lines not run (deploys)."""


def script(block: str, port: int) -> Script:
    """`block` as a bash script (run it with `bash -euo pipefail`); see the module's docstring."""
    lines, skipped = [], []
    for line in block.replace("\\\n", " ").splitlines():
        command = re.sub(r"\s+#.*$", "", line).strip()
        if re.search(r"\bsam deploy\b", command):
            skipped.append(command)
            lines.append(f"echo 'not run (it deploys): {command}'")
        elif command.startswith("lambda-mcp dev "):
            url = f"http://127.0.0.1:{port}/mcp"
            lines += [
                f"{command} --port {port} >dev.log 2>&1 &",
                "DEV=$! && trap 'kill $DEV' EXIT",
                f"for _ in $(seq 150); do curl -s -o /dev/null {url} && break; sleep 0.2; done",
                f"curl -s -o /dev/null {url} || {{ cat dev.log; exit 1; }}",
            ]
        else:
            lines.append(line)
    return Script("\n".join(lines) + "\n", skipped)
