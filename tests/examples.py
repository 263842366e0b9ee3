"""How many examples a property test draws: all of them in `make test` (CI), a quarter in
`make check` (`ARENA_TEST_EXAMPLES=0.25`), the tier a contributor runs after each change and
waits for; CI still draws every example on every commit."""

import os

MINIMUM = 25  # a scaled-down property still draws enough to find a plain mistake


def examples(full: int) -> int:
    """`full` scaled by ARENA_TEST_EXAMPLES (a fraction in (0, 1]; 1 when unset)."""
    text = os.environ.get("ARENA_TEST_EXAMPLES", "1")
    try:
        scale = float(text)
    except ValueError:
        scale = -1.0
    if not 0 < scale <= 1:
        raise ValueError(f"ARENA_TEST_EXAMPLES={text!r}: a fraction in (0, 1] is expected")
    return max(min(full, MINIMUM), round(full * scale))
