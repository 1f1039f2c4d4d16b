"""The console's tests' browser: Debian's Chromium driven by Playwright's Python API.

``CHROMIUM`` is its path (None when it is not installed: ``needs_chromium`` skips);
:func:`browser_page` opens a tab and collects the errors its page raises."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")

needs_chromium = pytest.mark.skipif(CHROMIUM is None, reason="needs Debian's chromium (apt-get install chromium)")


@contextmanager
def browser_page(**context: Any) -> Iterator[tuple[Any, list[str]]]:
    """A Chromium tab in a context of its own (``context``: Playwright's
    ``new_context`` options; a 1400 x 900 viewport unless given) and the list the
    errors its page raises are appended to. The browser is closed afterwards, whatever
    happened."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        try:
            tab = browser.new_context(**{"viewport": {"width": 1400, "height": 900}, **context}).new_page()
            errors: list[str] = []
            tab.on("pageerror", lambda error: errors.append(str(error)))
            yield tab, errors
        finally:
            browser.close()
