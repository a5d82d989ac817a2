"""`lambda-mcp new --target agentcore` (issue 38): the project also gets an arm64 Dockerfile whose process is
`lambda-mcp serve --agentcore app.py` on port 8000, a .dockerignore and the deploy notes; without the
target it gets none of them."""

from __future__ import annotations

import re
from pathlib import Path

from lambda_mcp.scaffold import create_project, next_steps
from lambda_mcp.scaffold.agentcore import kit_install
from lambda_mcp.scaffold.kit import Kit


def test_the_agentcore_target_adds_an_arm64_image_on_port_8000(tmp_path: Path) -> None:
    project = create_project("demo-rt", tmp_path, agentcore=True)
    dockerfile = (project / "Dockerfile").read_text()
    assert re.search(r"^FROM --platform=linux/arm64 python:3\.13-slim$", dockerfile, re.M)
    assert re.search(r"^EXPOSE 8000$", dockerfile, re.M)
    assert 'CMD ["lambda-mcp", "serve", "--agentcore", "app.py"]' in dockerfile
    assert "COPY app/ /app/" in dockerfile and (project / "app" / "app.py").is_file()  # what CMD serves
    installed = re.search(r'pip install --no-cache-dir "([^"]+)"', dockerfile)
    assert installed is not None
    wheel = installed.group(1).removesuffix("[aws]")
    if wheel.startswith("/tmp/kit/"):  # the wheel builds/kit/ carries (COPY builds/kit/ /tmp/kit/)
        assert (project / "builds" / "kit" / wheel.removeprefix("/tmp/kit/")).is_file()
    notes = (project / "AGENTCORE.md").read_text()
    assert "serverProtocol=MCP" in notes and "demo_rt" in notes and "GET /ping" in notes
    assert ".venv/" in (project / ".dockerignore").read_text()
    assert "AGENTCORE.md" in next_steps(project)


def test_the_default_target_has_no_container_files(tmp_path: Path) -> None:
    project = create_project("demo", tmp_path)
    assert not (project / "Dockerfile").exists() and not (project / "AGENTCORE.md").exists()
    assert "docker" not in next_steps(project)


def test_a_released_kit_is_installed_from_the_index_with_boto3() -> None:
    assert kit_install(Kit("1.2.3")) == "lambda-mcp[aws]==1.2.3"
