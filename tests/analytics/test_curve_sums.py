"""`family_curves` (the array carry-forward and family sums) against a plain pandas oracle.

The oracle is the straightforward version the read model used before: pivot each agent's
values onto the bucket grid, forward-fill, then sum the agents of each family. Any rows the
database could return (several snapshots in one bucket, seeds before the range, agents that
start late or never report) must give the same curve.
"""

from decimal import Decimal
from typing import Any

import numpy as np
import pandas as pd
from hypothesis import given, settings
from hypothesis import strategies as st

from arena.analytics.query.selects import typed_frame
from arena.analytics.views.curves import CURVE_COLUMNS, UNITS_PER_DOLLAR, family_curves
from tests.examples import examples

WIDTH = 600
FIRST = 1_700_000_400  # a multiple of WIDTH


def oracle(rows: list[tuple[int, int, int, int]], agent_rows: list[dict[str, Any]]) -> pd.DataFrame:
    columns = ("agent_id", "bucket", "total_value", "total_pnl")
    frame = pd.DataFrame.from_records(rows, columns=columns)
    frame = frame.drop_duplicates(["agent_id", "bucket"], keep="last")
    info = pd.DataFrame(agent_rows).set_index("agent_id")
    frame = frame[frame["agent_id"].isin(info.index)]
    if frame.empty:
        return typed_frame([], CURVE_COLUMNS)
    frame["total_value"] = frame["total_value"].astype("float64") / UNITS_PER_DOLLAR
    frame["total_pnl"] = frame["total_pnl"].astype("float64") / UNITS_PER_DOLLAR
    buckets = np.arange(FIRST - WIDTH, int(frame["bucket"].max()) + WIDTH, WIDTH)
    values = frame.pivot(index="bucket", columns="agent_id", values="total_value")
    pnls = frame.pivot(index="bucket", columns="agent_id", values="total_pnl")
    values = values.reindex(buckets).ffill()
    pnls = pnls.reindex(buckets).ffill()
    present = values.notna()
    out = []
    for family_id, group in info.loc[info.index.isin(values.columns)].groupby("family_id"):
        ids = list(group.index)
        starting = np.array([info.loc[i, "starting_balance"] / UNITS_PER_DOLLAR for i in ids])
        part = pd.DataFrame(
            {
                "family_id": family_id,
                "display_name": group["display_name"].iloc[0],
                "kind": group["kind"].iloc[0],
                "bucket": buckets,
                "total_value": values[ids].sum(axis=1).to_numpy(),
                "total_pnl": pnls[ids].sum(axis=1).to_numpy(),
                "capital": (present[ids].to_numpy() * starting).sum(axis=1),
                "agents": present[ids].sum(axis=1).to_numpy(),
            }
        )
        out.append(part[(part["bucket"] >= FIRST) & (part["agents"] > 0)])
    result = pd.concat(out, ignore_index=True)
    result["at"] = pd.to_datetime(result["bucket"], unit="s", utc=True)
    result["return_pct"] = result["total_pnl"] / result["capital"] * 100.0
    return typed_frame(result.to_dict("records"), CURVE_COLUMNS)


def agent_rows(families: list[str], balances: list[Decimal]) -> list[dict[str, Any]]:
    return [
        {
            "agent_id": agent,
            "family_id": family,
            "display_name": family.upper(),
            "kind": "baseline" if family == "c" else "llm",
            "starting_balance": int(balance.scaleb(6)),  # micro-dollars, as read
        }
        for agent, (family, balance) in enumerate(zip(families, balances, strict=True), 1)
    ]


units = st.integers(min_value=-(10**12), max_value=10**12)
point = st.tuples(st.integers(1, 6), st.integers(0, 12), units, units)


@settings(max_examples=examples(200), deadline=None)
@given(
    families=st.lists(st.sampled_from("abc"), min_size=1, max_size=6),
    balances=st.lists(st.sampled_from([Decimal("10000"), Decimal("2500.125")]), min_size=6),
    points=st.lists(point, max_size=40),
    seeds=st.dictionaries(st.integers(1, 7), st.tuples(units, units), max_size=7),
    by_slot=st.booleans(),
)
def test_family_curves_equal_the_pandas_oracle(
    families: list[str],
    balances: list[Decimal],
    points: list[tuple[int, int, int, int]],
    seeds: dict[int, tuple[int, int]],
    by_slot: bool,
) -> None:
    agents = agent_rows(families, balances[: len(families)])
    # The database's orders: by (agent, slot) for some agents, by slot for all of them; a
    # stable sort keeps the drawn order of the rows in one bucket (the last one counts).
    # Then one seed per agent.
    order = (lambda p: (p[1], p[0])) if by_slot else (lambda p: (p[0], p[1]))
    rows = [
        (agent, FIRST + step * WIDTH, value, pnl)
        for agent, step, value, pnl in sorted(points, key=order)
    ]
    rows += [(agent, FIRST - WIDTH, value, pnl) for agent, (value, pnl) in seeds.items()]

    got = family_curves(np.array(rows, dtype=np.int64).reshape(-1, 4), agents, FIRST, WIDTH)
    expected = oracle(rows, agents)

    assert list(got.columns) == list(CURVE_COLUMNS)
    assert got.dtypes.to_dict() == expected.dtypes.to_dict()
    pd.testing.assert_frame_equal(got, expected, check_exact=False, rtol=1e-9, atol=1e-6)


def test_family_curves_of_no_rows_is_the_typed_empty_frame() -> None:
    agents = agent_rows(["a"], [Decimal("10000")])
    frame = family_curves(np.empty((0, 4), np.int64), agents, FIRST, WIDTH)
    assert frame.empty and list(frame.columns) == list(CURVE_COLUMNS)
    assert frame.dtypes.to_dict() == typed_frame([], CURVE_COLUMNS).dtypes.to_dict()
