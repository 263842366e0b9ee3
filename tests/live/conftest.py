"""The live tier: real network, the developer's real key; never part of a default run.

`pyproject.toml` deselects the `live` marker by default (`-m "not live"`); `pytest -m live`
selects these tests. A check that cannot reach its host fails with one line saying the
network is unreachable (the user asked for live checks and must learn they did not run); the
LLM check skips when no key is configured.
"""

from collections.abc import Iterator

import pytest

from arena.config import get_settings
from tests.live.network import unreachable_lines


@pytest.fixture(autouse=True)
def _fresh_settings() -> Iterator[None]:
    """Replaces the suite's fixture of that name, which hides the developer's keys and
    `.env`: a live check runs with the real configuration on purpose."""
    get_settings.cache_clear()
    yield
    get_settings.cache_clear()


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """Say it once, whatever the terminal's width does to the short summary's lines."""
    lines = unreachable_lines()
    if lines:
        terminalreporter.write_sep("=", "live checks", red=True)
        for line in lines:
            terminalreporter.write_line(line, red=True, bold=True)
