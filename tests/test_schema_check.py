"""The schema comparison `arena restore` runs (`arena.storage.schema_check`): what it names on
PostgreSQL for each kind of object an attacker could add or change, and the normalisation
that keeps two genuine SQLite databases equal. The restore itself, end to end, is in
`tests/test_restore_schema.py`.
"""

import sqlite3
from collections.abc import Iterator
from contextlib import closing
from pathlib import Path

import pytest
from sqlalchemy import create_engine, text
from sqlalchemy.pool import NullPool

from arena.storage.migrate import head_revision
from arena.storage.schema_check import (
    Entry,
    pg_catalogue,
    schema_difference,
    sqlite_catalogue,
    sqlite_reference,
)
from tests.pg import PostgresCluster

HEAD = head_revision()


def test_a_difference_names_the_extra_column_not_its_changed_table() -> None:
    table = Entry("table", "agents", "agents", "CREATE TABLE agents (id)")
    changed = Entry("table", "agents", "agents", "CREATE TABLE agents (id, bonus)")
    column = Entry("column", "bonus", "agents", "BIGINT")
    assert schema_difference([table], [table], HEAD) is None
    assert schema_difference([table], [changed, column], HEAD) == (
        f'column "bonus" on table "agents" is not made by the migrations at revision {HEAD} '
        "(and 1 more difference(s))"
    )


def test_what_belongs_to_an_extra_table_is_left_to_the_table() -> None:
    extra = [
        Entry("table", "payouts", "payouts", "CREATE TABLE payouts (id)"),
        Entry("column", "id", "payouts", "INTEGER"),
        Entry("trigger", "pay", "payouts", "CREATE TRIGGER pay …"),
    ]
    assert schema_difference([], extra, "0003") == (
        'table "payouts" is not made by the migrations at revision 0003'
    )


def test_sqlite_catalogue_ignores_foreign_key_order_and_identifier_quotes(
    tmp_path: Path,
) -> None:
    """A batch migration writes a rebuilt table's foreign keys in varying order and its name
    quoted: two genuine databases must compare equal, a changed literal must not."""
    one, two = tmp_path / "one.db", tmp_path / "two.db"
    ddl = {
        one: "CREATE TABLE t (a INT, b INT, c TEXT DEFAULT 'x', "
        "FOREIGN KEY(a) REFERENCES p (id), FOREIGN KEY(b) REFERENCES q (id))",
        two: "CREATE TABLE \"t\" (a INT, b INT, c TEXT DEFAULT 'x', "
        "FOREIGN KEY(b) REFERENCES q (id),\n  FOREIGN KEY(a) REFERENCES p (id))",
    }
    catalogues = []
    for path, statement in ddl.items():
        with closing(sqlite3.connect(path)) as conn:
            conn.execute(statement)
            catalogues.append(sqlite_catalogue(conn))
    assert schema_difference(catalogues[0], catalogues[1], "x") is None
    with closing(sqlite3.connect(tmp_path / "three.db")) as conn:
        conn.execute(ddl[one].replace("'x'", "'\"x\"'"))
        assert schema_difference(catalogues[0], sqlite_catalogue(conn), "x") is not None


def test_sqlite_reference_at_head_is_the_migrated_template(sqlite_template: Path) -> None:
    with closing(sqlite3.connect(sqlite_template)) as conn:
        assert schema_difference(sqlite_reference(HEAD), sqlite_catalogue(conn), HEAD) is None


# --- PostgreSQL: every kind of object that can carry behaviour --------------------------------

PG_PROBES = [
    pytest.param(
        ["CREATE VIEW rich AS SELECT * FROM agents WHERE cash_balance > 0"],
        'view "rich" is not made by',
        id="extra-view",
    ),
    pytest.param(
        ["CREATE INDEX ix_rich ON agents (cash_balance)"],
        'index "ix_rich" is not made by',
        id="extra-index",
    ),
    pytest.param(
        ["ALTER TABLE agents ADD COLUMN bonus bigint DEFAULT 1000000 NOT NULL"],
        '"bonus" on table "agents" is not made by',
        id="extra-column",
    ),
    pytest.param(
        ["DROP INDEX ix_trades_market_id"],
        f'index "ix_trades_market_id" made by the migrations at revision {HEAD} is missing',
        id="missing-index",
    ),
    pytest.param(
        ["CREATE TABLE payouts (id serial PRIMARY KEY, amount bigint)"],
        'table "payouts" is not made by',
        id="extra-table",
    ),
    pytest.param(
        [
            "CREATE FUNCTION mint() RETURNS trigger LANGUAGE plpgsql AS "
            "$$ BEGIN NEW.cash_balance := NEW.cash_balance * 100; RETURN NEW; END $$",
            "CREATE TRIGGER mint BEFORE UPDATE ON agents FOR EACH ROW EXECUTE FUNCTION mint()",
        ],
        'trigger "mint" on table "agents" is not made by',
        id="extra-trigger",
    ),
    pytest.param(
        [
            "CREATE FUNCTION evil() RETURNS void LANGUAGE sql AS "
            "$$ UPDATE agents SET cash_balance = cash_balance * 100 $$"
        ],
        'function "evil()" is not made by',
        id="extra-function",
    ),
    pytest.param(
        [
            "CREATE OR REPLACE FUNCTION positions_holdings() RETURNS trigger "
            "LANGUAGE plpgsql AS $$ BEGIN RETURN NULL; END $$"
        ],
        'function "positions_holdings()" differs from what the migrations',
        id="replaced-trigger-function",
    ),
    pytest.param(
        ["ALTER TABLE positions DISABLE TRIGGER trg_positions_holdings"],
        'trigger "trg_positions_holdings" on table "positions" differs',
        id="disabled-trigger",
    ),
    pytest.param(
        [
            "CREATE RULE mint AS ON UPDATE TO agents DO ALSO "
            "UPDATE families SET display_name = display_name"
        ],
        'rule "mint" on table "agents" is not made by',
        id="extra-rule",
    ),
    pytest.param(
        [
            "ALTER TABLE agents ENABLE ROW LEVEL SECURITY",
            "CREATE POLICY hide ON agents USING (cash_balance > 0)",
        ],
        'policy "hide" on table "agents" is not made by',
        id="extra-policy",
    ),
    pytest.param(["CREATE SCHEMA shadow"], 'schema "shadow" is not made by', id="extra-schema"),
    pytest.param(
        ["ALTER TABLE agents ALTER COLUMN replicate SET DEFAULT 7"],
        'default value "replicate" on table "agents" differs',
        id="changed-default",
    ),
    pytest.param(
        ["ALTER TABLE agents ALTER COLUMN display_name TYPE text"],
        'column "display_name" on table "agents" differs',
        id="changed-column-type",
    ),
    pytest.param(
        ["ALTER SEQUENCE agents_id_seq INCREMENT BY 2"],
        'sequence "agents_id_seq" differs',
        id="changed-sequence",
    ),
    pytest.param(
        [
            "CREATE FUNCTION on_ddl() RETURNS event_trigger LANGUAGE plpgsql AS $$ BEGIN END $$",
            "CREATE EVENT TRIGGER on_ddl ON ddl_command_end EXECUTE FUNCTION on_ddl()",
        ],
        'event trigger "on_ddl" is not made by',
        id="extra-event-trigger",
    ),
]


@pytest.fixture
def pg_copy(pg_cluster: PostgresCluster, pg_template: str) -> Iterator[str]:
    """A migrated PostgreSQL database of its own (a copy of the session's template)."""
    url = pg_cluster.new_database(template=pg_template)
    try:
        yield url
    finally:
        pg_cluster.drop_database(url)


def read_catalogue(url: str) -> frozenset[Entry]:
    engine = create_engine(url, poolclass=NullPool)
    try:
        with engine.connect() as conn:
            return pg_catalogue(conn)
    finally:
        engine.dispose()


@pytest.mark.parametrize(("statements", "named"), PG_PROBES)
def test_pg_catalogue_names_what_the_migrations_do_not_make(
    statements: list[str], named: str, pg_copy: str
) -> None:
    expected = read_catalogue(pg_copy)
    engine = create_engine(pg_copy, poolclass=NullPool)
    try:
        with engine.begin() as conn:
            for statement in statements:
                conn.execute(text(statement))
    finally:
        engine.dispose()
    problem = schema_difference(expected, read_catalogue(pg_copy), HEAD)
    assert problem is not None and named in problem, problem
