"""Whether a live check can reach its host at all, asked once per host."""

import httpx
import pytest

PROBE_TIMEOUT_S = 10.0
_reached: dict[str, str | None] = {}


def require_network(url: str) -> None:
    """Fail the calling test in one line unless `url`'s host can be connected to (any answer
    will do, any status: only "could not connect at all" means the network is unreachable)."""
    origin = httpx.URL(url).copy_with(path="/", query=None)
    key = str(origin)
    if key not in _reached:
        try:
            with httpx.Client(timeout=PROBE_TIMEOUT_S) as client:
                client.head(origin)
            _reached[key] = None
        except (httpx.ConnectError, httpx.ConnectTimeout, httpx.ProxyError) as exc:
            detail = " ".join(str(exc).split()) or "no detail"
            _reached[key] = f"{type(exc).__name__}: {detail}"
        except httpx.HTTPError:  # something answered, if oddly: the check itself will tell
            _reached[key] = None
    problem = _reached[key]
    if problem is not None:
        pytest.fail(unreachable(origin.host, problem), pytrace=False)


def unreachable(host: str, problem: str) -> str:
    return f"live check did not run: the network is unreachable ({host}: {problem})"


def unreachable_lines() -> list[str]:
    """One line per host a live check could not reach in this session."""
    return [
        unreachable(httpx.URL(origin).host, problem)
        for origin, problem in _reached.items()
        if problem is not None
    ]
