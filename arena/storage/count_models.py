"""Counts the database keeps by triggers for the read models: each market's holdings and the
job runs per job and status (migration 0006; 0013 counts live agents' positions only).

Why its own module: `arena.storage.models` is at the project's line limit; it imports this one
so the tables are in the metadata wherever the schema is.
"""

from sqlalchemy import Column, ForeignKey, String
from sqlmodel import Field, SQLModel

from arena.storage.columns import counter


class MarketHolding(SQLModel, table=True):
    """Our positions in one market: ever opened, open now, distinct agents that held it.

    Why stored: the Markets list orders by them, and counting them at read time grouped
    every position ever opened. Database triggers on `positions` keep them (migration 0006),
    so no write path (engine, bulk load, repair by hand) can forget them; Python only reads
    them. A market nobody ever held has no row (or zeros, once its positions are deleted).
    """

    __tablename__ = "market_holdings"

    market_id: str = Field(sa_column=Column(String(64), ForeignKey("markets.id"), primary_key=True))
    position_count: int = counter()
    open_position_count: int = counter()
    holder_count: int = counter()


class JobRunCount(SQLModel, table=True):
    """How many runs of a job are in each status (the Operations page's health table).

    Why stored: counting them at read time walked every run ever claimed (the snapshot job
    alone claims 52,000 slots a year). Database triggers on `job_runs` keep them (migration
    0006), adding and taking one per run as it is claimed and finished.
    """

    __tablename__ = "job_run_counts"

    job: str = Field(primary_key=True, max_length=32)
    status: str = Field(primary_key=True, max_length=16)
    runs: int = counter()
