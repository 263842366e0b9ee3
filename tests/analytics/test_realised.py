"""How much of a return is realised: the stakes resolved against the stakes still
marked, on hand-built positions (open, settled won and lost, refunded, sold, partly sold, partly
sold then settled), per agent and per family over the leaderboard's scope, on both backends."""

from datetime import timedelta
from decimal import Decimal as D

import numpy as np
import pytest
from sqlalchemy import update
from sqlalchemy.engine import Engine

from arena.analytics.views.realised import (
    COHORT_REALISED_COLUMNS,
    FAMILY_REALISED_COLUMNS,
    realised_by_cohort,
    realised_by_family,
    with_shares,
)
from arena.config import Methodology
from arena.core.errors import InputError
from arena.engine.settlement import settle_market
from arena.markets.resolution import Verdict
from arena.storage.db import session_scope
from arena.storage.tables import COHORTS
from tests.factories import WEEK1, market, new_cohort_agents, trade_into

T = WEEK1 + timedelta(minutes=5)
SETTLED_AT = WEEK1 + timedelta(days=20)


def _book(engine: Engine) -> None:
    """Cohort 1: `a` holds one position of every kind, `b` none; cohort 2: `a` one open bet;
    cohort 3 (stamped with an extension): `a` one open bet, which "all" must leave out."""
    with session_scope(engine) as s:
        for mid in ("m1", "m2", "m3", "m4", "m5", "m6", "m7", "m8", "m9"):
            s.add(market(mid))
    a1, _ = new_cohort_agents(engine, ("fam-a", "fam-b"), number=1)
    (a2,) = new_cohort_agents(engine, ("fam-a",), number=2)
    (a3,) = new_cohort_agents(engine, ("fam-a",), number=3)
    extended = {**Methodology().stamp(), "extensions": ["stated_probability"]}
    with session_scope(engine) as s:
        s.execute(update(COHORTS).where(COHORTS.c.number == 3).values(constants=extended))
    trade_into(engine, a1, "m1", "YES", "500", "0.4", T)  # open: 500 marked
    trade_into(engine, a1, "m2", "YES", "250", "0.5", T)  # won: 250 settled
    trade_into(engine, a1, "m3", "YES", "100", "0.5", T)  # lost: 100 settled
    trade_into(engine, a1, "m4", "YES", "200", "0.5", T)  # void: 200 refunded
    trade_into(engine, a1, "m5", "YES", "200", "0.5", T, sell_pct="100")  # 200 sold
    trade_into(engine, a1, "m6", "YES", "300", "0.5", T, sell_pct="50")  # 150 sold, 150 marked
    trade_into(engine, a1, "m7", "YES", "400", "0.5", T, sell_pct="25")  # 100 sold, 300 settled
    trade_into(engine, a2, "m8", "YES", "100", "0.5", T + timedelta(weeks=1))
    trade_into(engine, a3, "m9", "YES", "1000", "0.5", T + timedelta(weeks=2))
    for mid, verdict in (
        ("m2", Verdict("resolved", "Yes", "test")),
        ("m3", Verdict("resolved", "No", "test")),
        ("m4", Verdict("cancelled", None, "test")),
        ("m7", Verdict("resolved", "Yes", "test")),
    ):
        settle_market(engine, mid, verdict, SETTLED_AT)


def test_every_kind_of_position_splits_by_hand(engine: Engine) -> None:
    """One book per backend (the suite's time budget): one cohort by hand, then the scopes."""
    _book(engine)
    frame = realised_by_cohort(engine, cohort=1)
    assert list(frame.columns) == list(COHORT_REALISED_COLUMNS)
    assert frame["family_id"].tolist() == ["fam-a", "fam-b"]
    a = frame.iloc[0]
    # stakes 500 + 250 + 100 + 200 + 200 + 300 + 400; marked: m1 and m6's unsold half
    assert (a["stakes"], a["marked_stakes"], a["resolved_stakes"]) == (1950.0, 650.0, 1300.0)
    assert (a["settled_stakes"], a["refunded_stakes"], a["sold_stakes"]) == (650.0, 200.0, 450.0)
    assert a["resolved_share"] == pytest.approx(1300 / 1950, abs=1e-15)
    assert a["marked_share"] == pytest.approx(650 / 1950, abs=1e-15)
    assert (a["positions"], a["resolved_positions"], a["marked_positions"]) == (7, 5, 2)
    b = frame.iloc[1]  # no position: nothing staked, no share
    assert b["stakes"] == 0.0 and b["positions"] == 0
    assert np.isnan(b["resolved_share"]) and np.isnan(b["marked_share"])
    # "All" is every plain v1 cohort (1 and 2), never the extended cohort 3, as the
    # leaderboard reads it; a cohort chosen by number is read as it is.
    per_cohort = realised_by_cohort(engine)
    assert per_cohort[["cohort_number", "family_id"]].values.tolist() == [
        [1, "fam-a"],
        [1, "fam-b"],
        [2, "fam-a"],
    ]
    families = realised_by_family(engine)
    assert list(families.columns) == list(FAMILY_REALISED_COLUMNS)
    a = families.set_index("family_id").loc["fam-a"]
    assert (a["stakes"], a["marked_stakes"], a["resolved_stakes"]) == (2050.0, 750.0, 1300.0)
    assert (a["positions"], a["marked_positions"]) == (8, 3)
    assert a["resolved_share"] == pytest.approx(1300 / 2050, abs=1e-15)
    extended = realised_by_family(engine, cohort=3).set_index("family_id").loc["fam-a"]
    assert (extended["stakes"], extended["marked_share"]) == (1000.0, 1.0)
    with pytest.raises(InputError):
        realised_by_family(engine, cohort=9)


@pytest.mark.parametrize("db_url", ["sqlite"], indirect=True)
def test_an_empty_database_has_no_rows(engine: Engine) -> None:
    assert realised_by_family(engine).empty and realised_by_cohort(engine).empty


def test_shares_are_exact_and_sum_to_one() -> None:
    row = {"stakes": D("0.000003"), "marked_stakes": D("0.000001")}
    shared = with_shares(row)
    assert shared["resolved_stakes"] == D("0.000002")
    assert shared["resolved_share"] == 2 / 3 and shared["marked_share"] == 1 / 3
    none = with_shares({"stakes": D(0), "marked_stakes": D(0)})
    assert np.isnan(none["resolved_share"]) and np.isnan(none["marked_share"])
