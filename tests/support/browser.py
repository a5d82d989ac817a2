"""A real browser for tests: headless Chromium from the Debian packages (`chromium`, `chromium-driver`:
./scripts/test installs them), driven by Selenium through /usr/bin/chromedriver, so nothing is ever
downloaded; a fresh profile each time, removed afterwards."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from selenium import webdriver
from selenium.webdriver.chrome.service import Service

CHROMIUM = Path("/usr/bin/chromium")
CHROMEDRIVER = Path("/usr/bin/chromedriver")
FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
)


@contextmanager
def chromium() -> Iterator[webdriver.Chrome]:
    """A headless Chromium with an empty profile, quit on exit."""
    if not (CHROMIUM.exists() and CHROMEDRIVER.exists()):
        pytest.fail("Chromium is not installed: run ./scripts/test (it installs Debian's chromium and chromium-driver)")
    profile = tempfile.mkdtemp(prefix="lambda-mcp-chromium-")
    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    for flag in (*FLAGS, f"--user-data-dir={profile}"):
        options.add_argument(flag)
    driver = webdriver.Chrome(service=Service(executable_path=str(CHROMEDRIVER)), options=options)
    driver.set_page_load_timeout(20)
    try:
        yield driver
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)
