"""The scope of a statistical read: one cohort or one protocol group's cohorts (all plain v1 by
default), and the UTC day of a timestamp.

Why its own module: the leaderboard's inputs, the random null, calibration and risk all turn
the cohort *number* a user typed into a filter the same way (unknown → InputError with a hint),
must mean the same cohorts by "all", and must agree on which calendar day a stored timestamp
falls on, on SQLite and PostgreSQL.

"All cohorts" (`cohort_id` None) is every v1 cohort: a cohort whose stamp names protocol
extensions (methodology §18) ran a longer prompt, or several agents per family, and a cohort of
methodology v2 (docs/methodology-v2.md) traded at other prices under another cap, so
methodology v1's statistics never mix either in. A cohort chosen by number is read as it is.
`excluded_cohorts` names the cohorts an all-cohort read leaves out, for the pages to say so.

A read model's `methodology` argument (default v1) picks whose "all" it is: "all cohorts of
version V" is every cohort whose protocol key is V alone (`cohort_id_of` resolves it to a
`CohortScope`): no extension, and for v2 the original's rule set, so v2's figures are computed
over those v2 cohorts alone and v1's exactly as before.

A *protocol group* is every cohort run under the same protocol: the same version, the same v2
rule set, the same extensions, and the same extension parameters (`protocol_key`:
``v1+horizon-14d``). Passed as `methodology`, a group's key scopes a read to its cohorts alone,
so a statistic over extended cohorts (a horizon season's leaderboard, its detectability) pools
only cohorts that ran alike and never a plain cohort; a plain version's key is the version's
name, read as before. A v2 cohort stamped before v2's rule set was (`frozen-quotes`,
`arena.config.v2_rule_set`) executed and ranks otherwise than the original's rules, so its
key names its rule set (``v2+frozen-quotes``): "all v2 cohorts" (``v2``) are those of the
original's rules alone, and the two are never pooled. Likewise a `book_execution` cohort whose
buys took the fee in shares (``v1+book_execution+fee_in_shares``).
"""

import re
from collections.abc import Mapping
from datetime import date, datetime
from typing import Any, TypeGuard

from sqlalchemy import (
    Boolean,
    ColumnElement,
    Date,
    Select,
    and_,
    cast,
    func,
    literal_column,
    or_,
    select,
)
from sqlalchemy.engine import Connection, Engine
from sqlalchemy.ext.compiler import compiles
from sqlalchemy.sql.compiler import SQLCompiler
from sqlalchemy.sql.functions import FunctionElement

from arena.config import (
    BOOK_EXECUTION,
    METHODOLOGY_VERSION,
    METHODOLOGY_VERSIONS,
    V2_FROZEN_RULES,
    V2_SOURCE_RULES,
    is_v2,
    stamped_extensions,
    stamped_fee_charged,
    v2_rule_set,
)
from arena.core.errors import InputError
from arena.core.fees import FEE_IN_SHARES
from arena.storage.tables import AGENTS, COHORTS, live_cohort

# A resolved scope: a cohort's database id; None: every plain v1 cohort (the scope every read
# had before v2, kept as None so v1 reads build exactly the SQL they did); a tuple of ids: the
# cohorts of one protocol key (`protocol_key`): a protocol group's, or another version's plain
# cohorts ("v2": the original's rules, no extension).
CohortScope = int | tuple[int, ...] | None
# The stamp keys that parameterise an extension, by extension: cohorts that differ in one run
# different protocols (a 7-day horizon is not a 14-day one) and form different groups.
# The part that keeps `book_execution` cohorts of the fee-in-shares convention apart.
FEE_IN_SHARES_PART = "fee_in_shares"
EXTENSION_PARAMETERS: dict[str, tuple[str, str]] = {
    "horizon": ("horizon_days", "d"),
    "replicates": ("replicates", ""),
}


# Joins a protocol key's parts: a plain version's key is the version alone, so a key with it
# names an extended group (`is_group`).
SEPARATOR = "+"


def is_group(key: str | None) -> TypeGuard[str]:
    """Whether a protocol key (a selector's value) names an extended protocol group rather
    than a methodology version's plain cohorts (None: plain v1)."""
    return key is not None and SEPARATOR in key


def protocol_key(version: str, constants: Mapping[str, Any] | None) -> str:
    """The protocol a cohort ran, as a stable id: its version, its v2 rule set when it is not
    the original's (``v2+frozen-quotes``), then each extension it is stamped with (sorted),
    with its parameter where it has one: ``v1``, ``v2``, ``v1+horizon-14d``,
    ``v1+replicates-3+stated_probability``. A `book_execution` cohort whose buys paid the fee in
    shares (stamped before `fee_charged`) is ``v1+book_execution+fee_in_shares``."""
    parts = [version]
    rules = v2_rule_set(version, constants)
    if rules is not None and rules != V2_SOURCE_RULES:
        parts.append(rules)
    for name in sorted(stamped_extensions(constants)):
        key, unit = EXTENSION_PARAMETERS.get(name, ("", ""))
        value = (constants or {}).get(key) if key else None
        parts.append(f"{name}-{value}{unit}" if value is not None else name)
        if name == BOOK_EXECUTION and stamped_fee_charged(constants) == FEE_IN_SHARES:
            parts.append(FEE_IN_SHARES_PART)  # fees taken in shares: never pooled with CLOB V2's
    return SEPARATOR.join(parts)


def protocol_label(key: str) -> str:
    """A protocol key as a person reads it: ``v1 + horizon 14d`` (underscores as spaces)."""
    return " + ".join(part.replace("_", " ").replace("-", " ") for part in key.split(SEPARATOR))


def key_version(key: str) -> str:
    """The methodology version a protocol key runs under (``v1+horizon-14d`` → ``v1``): the
    rules a page reads a group's figures under (its columns) are its version's."""
    return key.split(SEPARATOR, 1)[0]


def rule_key(key: str) -> str:
    """The rules a protocol key's figures are ranked and shown under: its version, and v2's
    frozen-quotes rule set apart (``v2+frozen-quotes+horizon-14d`` → ``v2+frozen-quotes``,
    ``v2+horizon-14d`` → ``v2``, ``v1+horizon-14d`` → ``v1``)."""
    version, *rest = key.split(SEPARATOR)
    if is_v2(version) and rest[:1] == [V2_FROZEN_RULES]:
        return f"{version}{SEPARATOR}{V2_FROZEN_RULES}"
    return version


_KEY_PART = re.compile(r"[A-Za-z0-9_.+-]+")


def normalised_key(value: str) -> str:
    """A protocol key as a link carried it: a hand-typed ``?methodology=v1+horizon-14d``
    arrives as ``v1 horizon-14d`` (URLSearchParams decodes "+" as a space), and a key never
    contains a space, so each run of spaces is its "+" again. Only a value whose every part
    could belong to a key (letters, digits, ``_ . -``) is rewritten: anything else is shown
    back as it came, in the warning naming a bad link."""
    parts = value.split()
    if not parts or not all(_KEY_PART.fullmatch(part) for part in parts):
        return value
    return SEPARATOR.join(parts)


def cohort_protocols(conn: Connection) -> dict[int, tuple[int, str]]:
    """Every live cohort's protocol key, by database id: (cohort number, key). A late
    entrant's shadow (same number) is no live cohort: never offered nor pooled as one."""
    rows = conn.execute(
        select(
            COHORTS.c.id, COHORTS.c.number, COHORTS.c.methodology_version, COHORTS.c.constants
        ).where(live_cohort())
    )
    return {int(i): (int(n), protocol_key(str(v), c)) for i, n, v, c in rows}


def protocols_present(engine: Engine | Connection) -> dict[str, list[int]]:
    """Every protocol some cohort ran → its cohort numbers (oldest first), plain versions
    first (v1, v2), then the extended groups by key: what a page offers as scopes."""
    if isinstance(engine, Connection):
        found = cohort_protocols(engine)
    else:
        with engine.connect() as conn:
            found = cohort_protocols(conn)
    groups: dict[str, list[int]] = {}
    for number, key in sorted(found.values()):
        groups.setdefault(key, []).append(number)
    return dict(sorted(groups.items(), key=lambda item: (is_group(item[0]), item[0])))


def _protocol_ids(conn: Connection, key: str, *, required: bool = True) -> tuple[int, ...]:
    """The ids of protocol key `key`'s cohorts; none → InputError naming the groups run
    (unless not `required`: then none)."""
    ids = tuple(sorted(i for i, (_, k) in cohort_protocols(conn).items() if k == key))
    if not ids and required:
        known = ", ".join(protocols_present(conn)) or "none yet"
        raise InputError(f"no cohort ran protocol {key!r}", f"protocols run here: {known}")
    return ids


def version_or_error(methodology: str) -> str:
    """`methodology` when it names a methodology version, else InputError naming the known."""
    if methodology not in METHODOLOGY_VERSIONS:
        known = ", ".join(METHODOLOGY_VERSIONS)
        raise InputError(f"methodology {methodology!r} does not exist", f"known: {known}")
    return methodology


def cohort_id_of(
    conn: Connection, cohort: int | None, methodology: str = METHODOLOGY_VERSION
) -> CohortScope:
    """The database id of cohort number `cohort`; for `cohort` None, the all-cohort scope of
    version `methodology` (None for v1; another version's plain cohorts' ids, whose key is the
    version alone: v2's of the original's rules), or of the protocol group `methodology` names
    (an extended `protocol_key`: its cohorts' ids). Unknown → InputError."""
    if cohort is None:
        if is_group(methodology):
            return _protocol_ids(conn, methodology)
        version = version_or_error(methodology)
        if version == METHODOLOGY_VERSION:
            return None
        return _protocol_ids(conn, version, required=False)
    by_number = select(COHORTS.c.id).where(COHORTS.c.number == cohort, live_cohort())
    found = conn.execute(by_number).scalar()
    if found is None:
        known = conn.execute(select(func.max(COHORTS.c.number)).where(live_cohort())).scalar()
        hint = f"cohorts are numbered 1 to {known}" if known else "no cohort exists yet"
        raise InputError(f"cohort {cohort} does not exist", hint)
    return int(found)


class StampExtended(FunctionElement[bool]):
    """SQL: whether a stamp (`cohorts.constants`, its one argument) names protocol
    extensions, exactly as `arena.config.stamped_extensions` reads it: ``extensions`` is a
    non-empty JSON list (a v1 stamp has no such key; null, an empty list or anything else is
    not an extension).

    Per dialect, because the JSON functions differ: SQLAlchemy's generic ``constants[...]``
    does not compare alike (on SQLite ``JSON_QUOTE(JSON_EXTRACT(...))`` of a missing key is
    the text ``null``, never SQL NULL), and PostgreSQL's ``json_array_length`` raises on a
    non-array, so its type is checked first.
    """

    type = Boolean()
    inherit_cache = True
    name = "stamp_extended"


@compiles(StampExtended)
def _stamp_extended_sqlite(element: Any, compiler: SQLCompiler, **kw: Any) -> str:
    # json_array_length: NULL without the key, 0 for a non-array or an empty one.
    constants = compiler.process(element.clauses, **kw)
    return f"(coalesce(json_array_length({constants}, '$.extensions'), 0) > 0)"


@compiles(StampExtended, "postgresql")
def _stamp_extended_postgresql(element: Any, compiler: SQLCompiler, **kw: Any) -> str:
    value = f"(({compiler.process(element.clauses, **kw)})::json -> 'extensions')"
    return (
        f"(CASE WHEN json_typeof({value}) = 'array' THEN json_array_length({value}) > 0 "
        "ELSE false END)"
    )


def live_cohort_of(cohort_id: Any) -> ColumnElement[bool]:
    """SQL join condition: `cohorts` is the LIVE cohort `cohort_id` names. A late entrant's
    shadow (methodology §20) repeats its original's number and week, so every live read
    that joins `cohorts` joins on this, and a shadow's rows never enter a live figure."""
    return and_(COHORTS.c.id == cohort_id, live_cohort())


def late_entries_present(conn: Connection) -> bool:
    """Whether a late entrant's shadow cohort exists: a read whose fast path takes every row
    (no cohort left out) must then take its scoped path instead."""
    query = select(COHORTS.c.id).where(~live_cohort()).limit(1)
    return conn.execute(query).first() is not None


def extended(cohorts: Any = COHORTS) -> ColumnElement[bool]:
    """SQL: the `cohorts` row (the table, or an alias of it) is an extended cohort: its
    stamp names protocol extensions."""
    return StampExtended(cohorts.c.constants)


def outside_v1(cohorts: Any = COHORTS) -> ColumnElement[bool]:
    """SQL: the `cohorts` row is not a plain v1 cohort: extended, or of another methodology
    version (v2 is never pooled with v1)."""
    return or_(extended(cohorts), cohorts.c.methodology_version != METHODOLOGY_VERSION)


def extended_cohort_ids() -> Select[Any]:
    """Select of the ids of the cohorts an all-cohort (v1) read leaves out: extended or not v1
    (on an alias of `cohorts`, never correlated: a query that joins `cohorts` itself reads it
    apart)."""
    stamps = COHORTS.alias("extended_cohorts")
    return select(stamps.c.id).where(outside_v1(stamps)).correlate(None)


def cohort_in_scope(column: Any, cohort_id: CohortScope) -> ColumnElement[bool]:
    """SQL: `column` (a cohort id) is cohort `cohort_id`; with None any v1 cohort, with a
    tuple the cohorts it lists."""
    if cohort_id is None:
        return column.not_in(extended_cohort_ids())
    if isinstance(cohort_id, tuple):
        return column.in_(cohort_id)
    return column == cohort_id


def in_scope(query: Select[Any], cohort_id: CohortScope) -> Select[Any]:
    """Restrict a query that joins `agents` to one cohort (None: every v1 cohort; a tuple: the
    cohorts it lists)."""
    return query.where(cohort_in_scope(AGENTS.c.cohort_id, cohort_id))


def versions_present(engine: Engine | Connection) -> list[str]:
    """The methodology versions some cohort ran under, oldest first (["v1"] before v2 ran):
    the dashboard shows its methodology selector only when there is more than one."""
    query = select(COHORTS.c.methodology_version).where(live_cohort()).distinct()
    if isinstance(engine, Connection):
        found = {str(v) for v in engine.execute(query).scalars()}
    else:
        with engine.connect() as conn:
            found = {str(v) for v in conn.execute(query).scalars()}
    return sorted(found, key=lambda v: (v not in METHODOLOGY_VERSIONS, v))


def excluded_cohorts(engine: Engine | Connection) -> list[int]:
    """The numbers of the extended or non-v1 cohorts an all-cohort read leaves out, oldest
    first (empty when every cohort is v1): for a page to say its v1 figures exclude them."""
    query = select(COHORTS.c.number).where(outside_v1(), live_cohort()).order_by(COHORTS.c.number)
    if isinstance(engine, Connection):
        return [int(n) for n in engine.execute(query).scalars()]
    with engine.connect() as conn:
        return [int(n) for n in conn.execute(query).scalars()]


def utc_date(column: Any, dialect: str) -> Any:
    """The UTC calendar date of a timestamp column, as SQL (GROUP BY-safe: no bound params).

    SQLite stores naive UTC text, so `date()` is the UTC date; PostgreSQL stores timestamptz,
    converted to UTC first so the session's time zone cannot shift a day.
    """
    if dialect == "postgresql":
        return cast(func.timezone(literal_column("'UTC'"), column), Date)
    return func.date(column)


def as_date(value: Any) -> date:
    """A `utc_date` result as a date (SQLite hands back text, PostgreSQL a date)."""
    if isinstance(value, datetime):
        return value.date()
    if isinstance(value, date):
        return value
    return date.fromisoformat(str(value)[:10])


def cohort_protocol(engine: Engine | Connection, number: int) -> str | None:
    """The protocol key of live cohort number `number` (None: no such cohort): a chosen cohort
    is read under its own rules (`rule_key`), whichever scope the sidebar shows."""
    if isinstance(engine, Connection):
        found = cohort_protocols(engine)
    else:
        with engine.connect() as conn:
            found = cohort_protocols(conn)
    return next((key for n, key in found.values() if n == number), None)


def scope_key(conn: Connection, cohort: int | None, methodology: str) -> str:
    """The protocol key whose rules a read of `cohort` (else of `methodology`'s all-cohort
    scope) is under: the chosen cohort's own, else `methodology` (a version or a group)."""
    if cohort is None:
        return methodology
    return cohort_protocol(conn, cohort) or methodology


def cohort_version(engine: Engine, number: int) -> str | None:
    """The methodology version cohort number `number` is stamped with (None: no such cohort),
    for a page to present a chosen cohort under its own version's rules."""
    query = select(COHORTS.c.methodology_version).where(COHORTS.c.number == number, live_cohort())
    with engine.connect() as conn:
        found = conn.execute(query).scalar()
    return None if found is None else str(found)


def extension_names(engine: Engine) -> list[str]:
    """The protocol extensions the database's cohorts were stamped with, sorted (what the
    sidebar names beside the extended cohorts)."""
    query = select(COHORTS.c.constants).where(extended(), live_cohort())
    with engine.connect() as conn:
        stamps = list(conn.execute(query).scalars())
    return sorted({name for stamp in stamps for name in stamped_extensions(stamp)})


def extended_cohorts(engine: Engine | Connection) -> list[int]:
    """The numbers of the cohorts stamped with protocol extensions, oldest first (a v2 cohort
    is left out of v1's figures too, but is not extended: the sidebar names the two apart)."""
    query = select(COHORTS.c.number).where(extended(), live_cohort()).order_by(COHORTS.c.number)
    if isinstance(engine, Connection):
        return [int(n) for n in engine.execute(query).scalars()]
    with engine.connect() as conn:
        return [int(n) for n in conn.execute(query).scalars()]
