"""`python scheduler.py`: the engine's jobs on the methodology's UTC clock.

The contract's entry point; the wiring (context, trigger table, catch-up, signals) lives in
`arena/app/scheduler.py`. `python scheduler.py --help` lists the options.
"""

import sys

from arena.app.scheduler import main

if __name__ == "__main__":
    sys.exit(main())
