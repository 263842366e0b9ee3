"""Is a backup's schema exactly what the migrations make? `arena restore` asks before loading.

A table, trigger, view, function, rule or default the migrations never made can change what
the engine's writes do (a trigger that adds cash on every update, a default that seeds it), so
a restore refuses a backup carrying one, or lacking one, before the live database is touched.

The expected schema is built fresh on every check by running the migrations to the backup's
revision into a scratch database (SQLite: a temporary file; PostgreSQL: a scratch database on
the same server), never kept in memory or on disk between checks, so it cannot drift from the
migrations. Both schemas are read into catalogues of `Entry` rows and compared by
`schema_difference` (pure).

SQLite: every `sqlite_master` row (tables, indexes, triggers, views, their SQL with whitespace
collapsed) and every column (`PRAGMA table_xinfo`). PostgreSQL: every object a user can create
in a database (each row of a per-database `pg_catalog` table with an oid past the built-in
ones, named by `pg_identify_object`: schemas, tables, sequences, indexes, views, functions,
triggers, rules, policies, defaults, constraints, types, extensions, casts, event triggers…),
each with its definition as PostgreSQL prints it, and every column.
"""

import re
import sqlite3
import tempfile
import uuid
from collections.abc import Callable, Iterable, Iterator
from contextlib import closing, contextmanager
from dataclasses import dataclass
from pathlib import Path

from sqlalchemy import create_engine, text
from sqlalchemy.engine import Connection, Engine, make_url
from sqlalchemy.exc import DBAPIError
from sqlalchemy.pool import NullPool

from arena.core.errors import ArenaError
from arena.storage.migrate import upgrade


@dataclass(frozen=True, order=True)
class Entry:
    """One schema object: its kind, name, the table it belongs to ("" if none), definition."""

    kind: str
    name: str
    table: str
    definition: str

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.kind, self.name, self.table)

    def describe(self) -> str:
        on = f' on table "{self.table}"' if self.table and self.table != self.name else ""
        return f'{self.kind} "{self.name}"{on}'


# The order a difference is reported in: what carries behaviour first, then the shape.
_KIND_ORDER = (
    "trigger",
    "event trigger",
    "function",
    "rule",
    "policy",
    "default value",
    "view",
    "materialized view",
    "schema",
    "extension",
    "column",
    "table",
    "index",
    "table constraint",
    "sequence",
)


_RELATIONS = frozenset({"table", "view", "materialized view"})


def _rank(entry: Entry) -> tuple[int, str, str]:
    order = _KIND_ORDER.index(entry.kind) if entry.kind in _KIND_ORDER else len(_KIND_ORDER)
    return (order, entry.table, entry.name)


def schema_difference(
    expected: Iterable[Entry], found: Iterable[Entry], revision: str
) -> str | None:
    """The first way `found` differs from `expected` (None: the same), naming the object.

    Pure. An object only one side has is reported before one both have with different
    definitions, and a column before its table (an extra column also changes its table's
    definition: the column is named); what belongs to a table or view only one side has
    (its columns, indexes, triggers, defaults, rules) is left to the table or view.
    """
    wanted = {e.key: e for e in expected}
    have = {e.key: e for e in found}
    owners = {e.name for e in wanted.values() if e.kind in _RELATIONS}
    owners ^= {e.name for e in have.values() if e.kind in _RELATIONS}
    for side in (wanted, have):
        for key in [k for k, e in side.items() if e.table in owners and e.kind not in _RELATIONS]:
            del side[key]
    at = f"the migrations at revision {revision}"
    problems: list[tuple[int, tuple[int, str, str], str]] = []
    for key in have.keys() - wanted.keys():
        entry = have[key]
        problems.append((0, _rank(entry), f"{entry.describe()} is not made by {at}"))
    for key in wanted.keys() - have.keys():
        entry = wanted[key]
        problems.append((0, _rank(entry), f"{entry.describe()} made by {at} is missing"))
    for key in wanted.keys() & have.keys():
        if wanted[key].definition != have[key].definition:
            entry = have[key]
            problems.append((1, _rank(entry), f"{entry.describe()} differs from what {at} make"))
    if not problems:
        return None
    problems.sort()
    more = f" (and {len(problems) - 1} more difference(s))" if len(problems) > 1 else ""
    return problems[0][2] + more


# --- SQLite ----------------------------------------------------------------------------------

# SQLite's own bookkeeping: ANALYZE's statistics (an operator may run it) and the indexes a
# table's UNIQUE / PRIMARY KEY clause implies (no SQL of their own: compared through the
# table's). Anything else named `sqlite_…` is compared: SQLite refuses such a name in CREATE,
# but a schema edited in place can hold a trigger `sqlite_mint`, and it fires.
_SQLITE_STATS = frozenset({"sqlite_stat1", "sqlite_stat2", "sqlite_stat3", "sqlite_stat4"})


def _internal(kind: str, name: str, sql: str | None) -> bool:
    if kind == "table":
        return name in _SQLITE_STATS
    return kind == "index" and name.startswith("sqlite_autoindex_") and sql is None


def _normal_sql(sql: str | None) -> str:
    """Whitespace collapsed; a CREATE TABLE's columns and constraints in sorted order.

    Why sorted: a batch migration rebuilds a table with its foreign keys in an order that
    varies from one run to the next, so two genuine databases differ in it. The columns are
    compared one by one besides (`PRAGMA table_xinfo`).
    """
    collapsed = _unquoted(" ".join((sql or "").split()))
    head, body, tail = _outer_parentheses(collapsed)
    if not collapsed.upper().startswith("CREATE TABLE") or body is None:
        return collapsed
    items = sorted(item.strip() for item in _split_top_level(body))
    return f"{head}({', '.join(items)}){tail}"


_LITERAL = re.compile(r"('(?:[^']|'')*')")
_QUOTED_NAME = re.compile(r'"([A-Za-z_][A-Za-z0-9_]*)"')


def _unquoted(sql: str) -> str:
    """Plain identifiers without their double quotes, outside string literals: a table that a
    batch migration rebuilt and renamed reads `CREATE TABLE "cohorts"`, one made directly
    `CREATE TABLE cohorts`."""
    parts = _LITERAL.split(sql)
    return "".join(
        part if index % 2 else _QUOTED_NAME.sub(r"\1", part) for index, part in enumerate(parts)
    )


_QUOTES = {"'": "'", '"': '"', "`": "`", "[": "]"}


def _scan(sql: str) -> Iterator[tuple[int, str, int]]:
    """Each character outside quotes with its index and the parenthesis depth before it."""
    depth, closing_quote = 0, ""
    for index, char in enumerate(sql):
        if closing_quote:
            if char == closing_quote:
                closing_quote = ""
            continue
        if char in _QUOTES:
            closing_quote = _QUOTES[char]
            continue
        yield index, char, depth
        depth += 1 if char == "(" else -1 if char == ")" else 0


def _outer_parentheses(sql: str) -> tuple[str, str | None, str]:
    """`head (body) tail` split at the first top-level parenthesis pair (body None: none)."""
    start = None
    for index, char, depth in _scan(sql):
        if char == "(" and depth == 0 and start is None:
            start = index
        elif char == ")" and depth == 1 and start is not None:
            return sql[:start], sql[start + 1 : index], sql[index + 1 :]
    return sql, None, ""


def _split_top_level(body: str) -> list[str]:
    cuts = [index for index, char, depth in _scan(body) if char == "," and depth == 0]
    bounds = zip([-1, *cuts], [*cuts, len(body)], strict=True)
    return [body[start + 1 : end] for start, end in bounds]


def sqlite_catalogue(conn: sqlite3.Connection) -> frozenset[Entry]:
    """Every table, index, trigger and view of a SQLite database, and every column."""
    rows = [
        (str(kind), str(name), str(table), sql)
        for kind, name, table, sql in conn.execute(
            "SELECT type, name, tbl_name, sql FROM sqlite_master"
        )
        if not _internal(str(kind), str(name), sql)
    ]
    entries = {Entry(kind, name, table, _normal_sql(sql)) for kind, name, table, sql in rows}
    for kind, name, _table, _sql in rows:
        if kind != "table":
            continue
        quoted = '"' + str(name).replace('"', '""') + '"'
        for _cid, column, type_, notnull, default, pk, hidden in conn.execute(
            f"PRAGMA table_xinfo({quoted})"
        ):
            shape = f"{type_} notnull={notnull} default={default} pk={pk} hidden={hidden}"
            entries.add(Entry("column", str(column), str(name), shape))
    return frozenset(entries)


def sqlite_reference(revision: str) -> frozenset[Entry]:
    """The catalogue the migrations make at `revision`, built in a temporary file (~0.3 s)."""
    with tempfile.TemporaryDirectory(prefix="arena-schema-") as folder:
        path = Path(folder) / "reference.db"
        engine = create_engine(f"sqlite:///{path}", poolclass=NullPool)
        try:
            upgrade(engine, revision)
        finally:
            engine.dispose()
        with closing(sqlite3.connect(path)) as conn:
            return sqlite_catalogue(conn)


def sqlite_schema_problem(conn: sqlite3.Connection, revision: str) -> str | None:
    """How the SQLite database on `conn` differs from the migrations at `revision`."""
    return schema_difference(sqlite_reference(revision), sqlite_catalogue(conn), revision)


# --- PostgreSQL ------------------------------------------------------------------------------

_FIRST_USER_OID = 16384  # PostgreSQL's FirstNormalObjectId: below it, the built-in objects

# The definition read for each kind of object; any other kind is compared by name only.
_PG_DEFINITIONS = {
    "pg_class": """concat_ws(' ', x.relkind, x.relpersistence, x.relrowsecurity,
        x.relforcerowsecurity, x.reloptions::text, x.relacl::text,
        CASE WHEN x.relkind IN ('i', 'I') THEN pg_get_indexdef(x.oid)
             WHEN x.relkind IN ('v', 'm') THEN pg_get_viewdef(x.oid) END,
        (SELECT concat_ws(' ', s.seqtypid::regtype, s.seqstart, s.seqincrement, s.seqmax,
                s.seqmin, s.seqcache, s.seqcycle)
           FROM pg_sequence s WHERE s.seqrelid = x.oid))""",
    "pg_proc": """concat_ws(' ', x.proacl::text, CASE WHEN x.prokind = 'a'
        THEN pg_get_function_identity_arguments(x.oid) ELSE pg_get_functiondef(x.oid) END)""",
    "pg_trigger": "concat_ws(' ', x.tgenabled, pg_get_triggerdef(x.oid))",
    "pg_rewrite": "concat_ws(' ', x.ev_enabled, pg_get_ruledef(x.oid))",
    "pg_constraint": "pg_get_constraintdef(x.oid)",
    "pg_attrdef": "pg_get_expr(x.adbin, x.adrelid)",
    "pg_policy": """concat_ws(' ', x.polcmd, x.polpermissive, x.polroles::text,
        pg_get_expr(x.polqual, x.polrelid), pg_get_expr(x.polwithcheck, x.polrelid))""",
    "pg_event_trigger": """concat_ws(' ', x.evtevent, x.evtfoid::regprocedure, x.evtenabled,
        x.evttags::text)""",
    "pg_namespace": "x.nspacl::text",
    "pg_type": "concat_ws(' ', x.typtype, x.typbasetype::regtype, x.typnotnull, x.typdefault)",
}

# Rows PostgreSQL makes for another object, named by oid: a foreign key's internal triggers.
_PG_IMPLIED = {"pg_trigger": " AND NOT x.tgisinternal"}

# Catalogues whose rows `pg_identify_object` cannot name: named here instead.
_PG_NAMES = {
    "pg_enum": "'enum label', format('%s %L', x.enumtypid::regtype, x.enumlabel)",
    "pg_largeobject_metadata": "'large object', x.oid::text",
}

_PG_CATALOGUES = text(
    """SELECT c.relname FROM pg_class c
         JOIN pg_attribute a ON a.attrelid = c.oid AND a.attname = 'oid'
        WHERE c.relnamespace = 'pg_catalog'::regnamespace AND c.relkind = 'r'
          AND NOT c.relisshared
        ORDER BY c.relname"""
)

_PG_COLUMNS = text(
    f"""SELECT c.relnamespace::regnamespace::text, c.relname, a.attname,
               concat_ws(' ', format_type(a.atttypid, a.atttypmod), a.attnotnull,
                         a.attidentity, a.attgenerated, a.attcollation::regcollation,
                         a.attacl::text)
          FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid
         WHERE c.oid >= {_FIRST_USER_OID} AND a.attnum > 0 AND NOT a.attisdropped
           AND c.relkind IN ('r', 'p', 'v', 'm', 'f', 'c')
           AND c.relnamespace <> 'pg_toast'::regnamespace"""
)


def _pg_object_select(catalogue: str) -> str:
    definition = _PG_DEFINITIONS.get(catalogue, "''")
    implied = _PG_IMPLIED.get(catalogue, "")
    if catalogue in _PG_NAMES:
        named = _PG_NAMES[catalogue]
        return (
            f"SELECT {named}, NULL::text, {definition} FROM pg_catalog.{catalogue} x "
            f"WHERE x.oid >= {_FIRST_USER_OID}{implied}"
        )
    return (
        f"SELECT o.type, o.identity, o.schema, {definition} FROM pg_catalog.{catalogue} x, "
        f"LATERAL pg_identify_object('pg_catalog.{catalogue}'::regclass, x.oid, 0) o "
        f"WHERE x.oid >= {_FIRST_USER_OID}{implied}"
    )


def _pg_entry(kind: str, identity: str, definition: str) -> Entry:
    """An object named as `schema.name`, `name on schema.table` or `for schema.table.col`,
    with the `public.` schema left off (where the migrations put everything)."""
    name, _, table = identity.partition(" on ")
    if kind == "default value":
        name = identity.removeprefix("for ")
        table, _, name = name.rpartition(".")
    name, table = name.removeprefix("public.").strip('"'), table.removeprefix("public.")
    return Entry(kind, name, table, definition)


def pg_catalogue(conn: Connection) -> frozenset[Entry]:
    """Every object a user made in the PostgreSQL database on `conn`, and every column."""
    entries: set[Entry] = set()
    for catalogue in conn.execute(_PG_CATALOGUES).scalars():
        for kind, identity, schema, definition in conn.execute(
            text(_pg_object_select(str(catalogue)))
        ):
            if schema == "pg_toast":  # a table's out-of-line storage, named by its oid
                continue
            entries.add(_pg_entry(str(kind), str(identity), str(definition or "")))
    for schema, table, column, shape in conn.execute(_PG_COLUMNS):
        owner = str(table) if schema == "public" else f"{schema}.{table}"
        entries.add(Entry("column", str(column), owner, str(shape)))
    return frozenset(entries)


def _autocommit_engine(url: str) -> Engine:
    return create_engine(url, poolclass=NullPool, isolation_level="AUTOCOMMIT")


@contextmanager
def scratch_database(url: str) -> Iterator[str]:
    """A new empty database on the server of `url` (from template0), dropped afterwards."""
    name = f"arena_restore_check_{uuid.uuid4().hex[:12]}"
    admin = _autocommit_engine(url)
    try:
        try:
            with admin.connect() as conn:
                conn.execute(text(f'CREATE DATABASE "{name}" TEMPLATE template0'))
        except DBAPIError as exc:
            detail = str(exc.orig).strip().splitlines()[0] if exc.orig else str(exc)
            raise ArenaError(
                f"restore cannot check the backup's schema: creating a scratch database "
                f"failed ({detail})",
                "let the database role create databases (CREATEDB) for the restore",
            ) from None
        try:
            yield make_url(url).set(database=name).render_as_string(hide_password=False)
        finally:
            with admin.connect() as conn:
                conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
    finally:
        admin.dispose()


def _read_catalogue(url: str) -> frozenset[Entry]:
    engine = _autocommit_engine(url)
    try:
        with engine.connect() as conn:
            return pg_catalogue(conn)
    finally:
        engine.dispose()


def pg_schema_problem(
    url: str,
    revision: str,
    dump: Path,
    dump_schema: Callable[[str, Path], None],
    load_schema: Callable[[str, Path, bool], None],
) -> str | None:
    """How `dump`'s schema differs from the migrations at `revision` (None: not at all).

    Two scratch databases on the server of `url`: one migrated to `revision`, then its schema
    dumped (`dump_schema(url, file)`) and loaded back over itself (`load_schema(url, file,
    clean=True)`); the other given `dump`'s schema (`load_schema(url, dump, False)`; no rows,
    so no trigger of the dump fires). Why the expected schema makes the round trip too:
    PostgreSQL prints some expressions differently once dumped and reloaded (`x IN ('a', 'b')`
    on a varchar), and once settles them. About 1.3 s on a local server.
    """
    with tempfile.TemporaryDirectory(prefix="arena-schema-") as folder:
        reference = Path(folder) / "reference.dump"
        with scratch_database(url) as expected_url:
            engine = create_engine(expected_url, poolclass=NullPool)
            try:
                upgrade(engine, revision)
            finally:
                engine.dispose()
            dump_schema(expected_url, reference)
            load_schema(expected_url, reference, True)
            with scratch_database(url) as found_url:
                load_schema(found_url, dump, False)
                return schema_difference(
                    _read_catalogue(expected_url), _read_catalogue(found_url), revision
                )
