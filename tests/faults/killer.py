"""Run the `arena` CLI in this process, but SIGKILL ourselves at a chosen point of the engine.

Usage: python -m tests.faults.killer POINT -- arena-args...
       python -m tests.faults.killer POINT -- scheduler.py scheduler-args...

POINT names an engine function; the process kills itself (SIGKILL: no cleanup, no rollback
handlers, no atexit) the moment that function is entered. It is a real crash of a real
process, placed deterministically, with no test hook in the product code.
"""

import os
import signal
import sys
from collections.abc import Callable
from typing import Any

POINTS = {
    # the model has answered; its trades and final status are about to be written
    "before_trades": ("arena.engine.decisions", "_finish"),
    # inside the snapshot transaction, after the agents were read and values computed
    "mid_snapshot": ("arena.engine.snapshots", "_upsert_snapshots"),
    # inside the settlement transaction, after the first position settled
    "mid_settlement": ("arena.engine.settlement", "_score_buys"),
}


def _die(*_args: Any, **_kwargs: Any) -> Any:
    os.kill(os.getpid(), signal.SIGKILL)


def arm(point: str) -> None:
    module_name, attribute = POINTS[point]
    module = __import__(module_name, fromlist=[attribute])
    original: Callable[..., Any] = getattr(module, attribute)
    assert callable(original)
    setattr(module, attribute, _die)


def main() -> None:
    point, separator, *args = sys.argv[1:]
    assert separator == "--"
    arm(point)
    if args and args[0] == "scheduler.py":
        import runpy

        sys.argv = args
        runpy.run_path(args[0], run_name="__main__")
        return
    from arena.app.cli import main as arena_main

    arena_main(args)


if __name__ == "__main__":
    main()
