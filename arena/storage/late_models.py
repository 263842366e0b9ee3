"""A market's resolution asked of the market source for a late entrant (methodology §20.3).

Why its own module: `arena.storage.models` is at the project's line limit; it imports this one
so the table is in the metadata wherever the schema is.
"""

from datetime import datetime

from sqlalchemy import JSON, CheckConstraint, Column, ForeignKey, String, Text
from sqlmodel import Field, SQLModel

from arena.storage.columns import timestamp


class LateEntryResolution(SQLModel, table=True):
    """A market's resolution asked of the market source for a late entrant (methodology §20.3):
    one the database had never recorded, because no live agent held the market.

    Why apart from `markets`: writing it there would change what live reads see (the random
    null replays every market of a frozen universe by its fate), and a late entrant never
    touches a live figure. Kept with its provenance (the source, when, the fields the verdict
    rests on); one per market, the first decided answer.
    """

    __tablename__ = "late_entry_resolutions"
    __table_args__ = (
        CheckConstraint("state IN ('resolved', 'cancelled')", name="ck_late_resolutions_state"),
    )

    market_id: str = Field(sa_column=Column(String(64), ForeignKey("markets.id"), primary_key=True))
    source: str = Field(max_length=16)
    asked_at: datetime = timestamp()
    state: str = Field(max_length=16)
    resolution_outcome: str = Field(max_length=256)  # the winner, or CANCELLED
    closed: bool
    uma_resolution_status: str | None = None
    prices: list[str] = Field(default_factory=list, sa_type=JSON)
    reason: str = Field(sa_type=Text)
