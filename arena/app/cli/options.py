"""What every command shares: the --at option and the integer maxima of the options."""

from datetime import UTC, datetime
from typing import Annotated

import typer

AtOption = Annotated[
    str | None,
    typer.Option("--at", help="Run as of this UTC instant (ISO-8601); default now."),
]

# The largest integer a command accepts (`max=` of every integer option): what an id column
# (SQLite INTEGER, PostgreSQL BIGINT) and the drivers can bind. Beyond it a value is a usage
# error before anything runs, not an OverflowError half way through the output.
MAX_ID = 2**63 - 1
# A cohort number is an INTEGER column: 4 bytes on PostgreSQL, which refuses to compare it
# with anything larger (a DataError) where SQLite just finds no cohort.
MAX_COHORT = 2**31 - 1


def at_instant(value: str | None) -> datetime:
    """The instant of `--at` (ISO-8601, UTC), or now: only the shells read the clock."""

    from arena.core.timeutil import parse_instant

    return parse_instant(value) if value else datetime.now(UTC)
