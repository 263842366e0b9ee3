"""`arena restore` refuses a backup whose schema is not exactly what the migrations make at its
revision: an extra trigger (the cash-minting one), view, index, table or column, a missing
index, a changed trigger or default. One line naming the object, exit 1, the database as it
was, nothing left behind.

Every test drives the real CLI on real SQLite files or on the suite's PostgreSQL server; the
catalogue comparison's finer cases are in `tests/test_schema_check.py`.
"""

import shutil
import sqlite3
from contextlib import closing
from pathlib import Path

import pytest
from sqlalchemy import text

from arena.storage.db import create_db_engine
from arena.storage.migrate import downgrade, head_revision
from tests.factories import seed_basic
from tests.pg import PostgresCluster
from tests.test_restore_safety import (  # noqa: F401  (live, pg_live: fixtures)
    cli_backup,
    integrity,
    leftovers,
    live,
    pg_dump_of,
    pg_fingerprint,
    pg_live,
    run_cli,
    sqlite_dump,
)

MINT = 33_000_000_000_000  # micro-dollars: the $33,000,000 the observed trigger added
HEAD = head_revision()


def assert_refused(code: int, out: str, err: str, source: Path, *fragments: str) -> None:
    """Exit 1 and one stderr line naming the file and each fragment."""
    assert code == 1 and "restored" not in out, (code, out, err)
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert str(source) in lines[0] and "not touched" in lines[0], lines[0]
    for fragment in fragments:
        assert fragment in lines[0], lines[0]


def agent_ids(path: Path) -> list[int]:
    with closing(sqlite3.connect(path)) as conn:
        return [row[0] for row in conn.execute("SELECT id FROM agents")]


def total_cash(path: Path) -> int:
    with closing(sqlite3.connect(path)) as conn:
        return int(conn.execute("SELECT sum(cash_balance) FROM agents").fetchone()[0])


# --- SQLite ----------------------------------------------------------------------------------

SQLITE_MINT = (
    "CREATE TRIGGER mint AFTER UPDATE ON agents BEGIN "
    f"UPDATE agents SET cash_balance = cash_balance + {MINT} WHERE id = NEW.id; END"
)


def tampered(good: Path, folder: Path, *statements: str) -> Path:
    """A copy of the backup `good` with `statements` run on it."""
    folder.mkdir(exist_ok=True)
    source = folder / "tampered.db"
    shutil.copyfile(good, source)
    with closing(sqlite3.connect(source)) as conn:
        for statement in statements:
            conn.execute(statement)
        conn.commit()
    return source


def test_sqlite_restore_refuses_a_backup_with_a_trigger_that_mints_cash(
    live: Path,  # noqa: F811
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    good = cli_backup(tmp_path / "bk", capsys)
    source = tampered(good, tmp_path / "src", SQLITE_MINT)
    # the trigger is real: on a copy, any write to an agent mints cash
    probe = tampered(source, tmp_path / "probe", "UPDATE agents SET cash_balance = cash_balance")
    assert total_cash(probe) == total_cash(good) + MINT * len(agent_ids(good))
    before = sqlite_dump(live)
    code, out, err = run_cli(["restore", str(source), "--yes"], capsys)
    assert_refused(
        code,
        out,
        err,
        source,
        f'trigger "mint" on table "agents" is not made by the migrations at revision {HEAD}',
    )
    assert sqlite_dump(live) == before and integrity(live) == ["ok"]
    assert leftovers(live.parent, source.parent) == []
    assert not (live.parent / "arena.db.before-restore").exists()


def _writable(name: str, old: str, new: str) -> list[str]:
    """Statements that edit an object's stored SQL in place (what no migration does)."""
    return [
        "PRAGMA writable_schema = ON",
        f"UPDATE sqlite_master SET sql = replace(sql, '{old}', '{new}') WHERE name = '{name}'",
    ]


SQLITE_VARIANTS = [
    pytest.param(
        ["CREATE VIEW rich AS SELECT * FROM agents WHERE cash_balance > 0"],
        f'view "rich" is not made by the migrations at revision {HEAD}',
        id="extra-view",
    ),
    pytest.param(
        ["CREATE INDEX ix_rich ON agents (cash_balance)"],
        'index "ix_rich" on table "agents" is not made by',
        id="extra-index",
    ),
    pytest.param(
        ["ALTER TABLE agents ADD COLUMN bonus BIGINT DEFAULT 1000000 NOT NULL"],
        'column "bonus" on table "agents" is not made by',
        id="extra-column",
    ),
    pytest.param(
        ["DROP INDEX ix_trades_market_id"],
        f'index "ix_trades_market_id" on table "trades" made by the migrations at revision '
        f"{HEAD} is missing",
        id="missing-index",
    ),
    pytest.param(
        ["CREATE TABLE payouts (id INTEGER PRIMARY KEY, agent_id INTEGER, amount BIGINT)"],
        'table "payouts" is not made by',
        id="extra-table",
    ),
    pytest.param(
        [
            SQLITE_MINT.replace("mint", "tmp_mint"),
            *_writable("tmp_mint", "tmp_mint", "sqlite_mint"),
            "UPDATE sqlite_master SET name = 'sqlite_mint' WHERE name = 'tmp_mint'",
        ],
        'trigger "sqlite_mint" on table "agents" is not made by',
        id="trigger-under-a-reserved-name",
    ),
    pytest.param(
        _writable(
            "trg_positions_holdings_insert",
            "count(DISTINCT p.agent_id)",
            "count(DISTINCT p.agent_id) + 1",
        ),
        'trigger "trg_positions_holdings_insert" on table "positions" differs from what the '
        "migrations at revision",
        id="changed-trigger",
    ),
    pytest.param(
        _writable("agents", "DEFAULT ''1''", "DEFAULT ''7''"),
        'column "replicate" on table "agents" differs',
        id="changed-default",
    ),
]


@pytest.mark.parametrize(("statements", "named"), SQLITE_VARIANTS)
def test_sqlite_restore_refuses_a_schema_the_migrations_do_not_make(
    statements: list[str],
    named: str,
    live: Path,  # noqa: F811
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    good = cli_backup(tmp_path / "bk", capsys)
    source = tampered(good, tmp_path / "src", *statements)
    with closing(sqlite3.connect(source)) as conn:  # still an arena file SQLite reads as whole
        assert [r[0] for r in conn.execute("PRAGMA integrity_check")] == ["ok"]
    before = sqlite_dump(live)
    code, out, err = run_cli(["restore", str(source), "--yes"], capsys)
    assert_refused(code, out, err, source, named)
    assert sqlite_dump(live) == before and integrity(live) == ["ok"]
    assert leftovers(live.parent, source.parent) == []


def test_sqlite_restore_takes_a_genuine_backup_at_an_older_revision(
    live: Path,  # noqa: F811
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The expected schema is the one at the backup's own revision, not at head."""
    older = tmp_path / "old" / "arena.db"
    older.parent.mkdir()
    shutil.copyfile(live, older)
    engine = create_db_engine(f"sqlite:///{older}")
    downgrade(engine, "0010")
    engine.dispose()
    code, out, err = run_cli(["restore", str(older), "--yes"], capsys)
    assert code == 0, err
    assert "schema revision 0010" in out and "arena init-db" in out
    assert sqlite_dump(live) == sqlite_dump(older)


# --- PostgreSQL ------------------------------------------------------------------------------

PG_MINT = (
    "CREATE FUNCTION mint() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN "
    f"NEW.cash_balance := NEW.cash_balance + {MINT}; RETURN NEW; END $$",
    "CREATE TRIGGER mint BEFORE UPDATE ON agents FOR EACH ROW EXECUTE FUNCTION mint()",
)


def test_pg_restore_refuses_a_dump_with_a_trigger_that_mints_cash(
    pg_live: str,  # noqa: F811
    pg_cluster: PostgresCluster,
    pg_template: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    url = pg_cluster.new_database(template=pg_template)
    try:
        engine = create_db_engine(url)
        seed_basic(engine)
        with engine.begin() as conn:
            for statement in PG_MINT:
                conn.execute(text(statement))
            before_cash = conn.execute(text("SELECT sum(cash_balance) FROM agents")).scalar()
            conn.execute(text("UPDATE agents SET cash_balance = cash_balance"))
            minted = conn.execute(text("SELECT sum(cash_balance) FROM agents")).scalar()
        engine.dispose()
        assert minted is not None and before_cash is not None and minted > before_cash
        folder = tmp_path / "src"
        folder.mkdir()
        source = pg_dump_of(url, folder)
    finally:
        pg_cluster.drop_database(url)
    before = pg_fingerprint(pg_live)
    code, out, err = run_cli(["restore", str(source), "--yes"], capsys)
    assert_refused(
        code,
        out,
        err,
        source,
        f'trigger "mint" on table "agents" is not made by the migrations at revision {HEAD}',
    )
    assert pg_fingerprint(pg_live) == before
    assert sorted(p.name for p in folder.iterdir()) == [source.name]
