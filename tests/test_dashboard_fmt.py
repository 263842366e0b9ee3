"""The dashboard's one formatting module: every figure a person reads, written one way."""

import math
import re
from typing import Any

import pandas as pd
import pytest

from arena.dashboard import fmt


@pytest.mark.parametrize("missing", [None, math.nan, pd.NA, pd.NaT, float("nan")])
def test_a_missing_value_is_a_dash_everywhere(missing: object) -> None:
    writers = [fmt.money, fmt.signed_money, fmt.cost, fmt.signed_pct, fmt.prob, fmt.share]
    writers += [fmt.signed_prob, fmt.count, fmt.percentile, fmt.text, fmt.data_size]
    assert {write(missing) for write in writers} == {"—"}
    assert fmt.pct_interval(missing, 1, 2) == "—"
    assert fmt.rank_interval(missing, 1, 2) == "—"


@pytest.mark.parametrize(
    ("written", "expected"),
    [
        (fmt.pct_interval(12.5, -3.1, 27.94), "+12.5% [−3.1, +27.9]"),
        (fmt.pct_interval(12.5, None, 27.9), "+12.5%"),
        (fmt.pct_interval(-0.04, -1, 1), "+0.0% [−1.0, +1.0]"),  # no "−0.0"
        (fmt.money(10756.54), "$10,756.54"),
        (fmt.money(-1234.5), "−$1,234.50"),
        (fmt.money(-0.001), "$0.00"),
        (fmt.signed_money(756.544), "+$756.54"),
        (fmt.signed_money(-2), "−$2.00"),
        (fmt.cost(0.01234), "$0.0123"),
        (fmt.cost(1234.5), "$1,234.50"),
        (fmt.prob_interval(0.2453, 0.201, 0.29), "0.245 [0.201, 0.290]"),
        (fmt.prob_interval(-0.012, -0.03, 0.004, signed=True), "−0.012 [−0.030, +0.004]"),
        (fmt.share(0.784), "78%"),
        (fmt.share_interval(0.54, 0.41, 0.66), "54% [41, 66]"),
        (fmt.rank_interval(2, 1, 4), "2 [1, 4]"),
        (fmt.rank_interval(1, 1, 1), "1"),
        (fmt.count(1234.0), "1,234"),
        (fmt.percentile(93.2), "93rd"),
        (fmt.percentile(11), "11th"),
        (fmt.percentile(1), "1st"),
        (fmt.data_size(31609), "31.6 kB"),
        (fmt.data_size(2_400_000), "2.4 MB"),
        (fmt.data_size(512), "512 bytes"),
    ],
)
def test_figures_read_the_same_way(written: str, expected: str) -> None:
    assert written == expected


@pytest.mark.parametrize(
    ("written", "expected"),
    [
        (fmt.money_interval(235.912, 96.57, 375.25), "+$235.91 [+$96.57, +$375.25]"),
        (fmt.money_interval(-1381.7, -2508.24, -255.18), "−$1,381.70 [−$2,508.24, −$255.18]"),
        (fmt.money_interval(12.0, None, 3.0), "+$12.00"),
        (fmt.money_interval(float("nan"), 1.0, 2.0), "—"),
        (fmt.p_value(0.25), "0.250"),
        (fmt.p_value(0.0004), "< 0.001"),
        (fmt.p_value(None), "—"),
        # A rate per dollar: one number of decimals, 3 significant digits of the largest.
        (fmt.rate_interval(2.154, 0.512, 4.021), "+2.15 [+0.51, +4.02]"),
        (fmt.rate_interval(-0.00154, -0.0031, 0.00002), "−0.00154 [−0.00310, +0.00002]"),
        (fmt.rate_interval(1408.2, -789.4, 4248.0), "+1408 [−789, +4248]"),
        (fmt.rate_interval(-0.0001, -0.5, 0.5), "+0.000 [−0.500, +0.500]"),  # no "−0.000"
        (fmt.rate_interval(3.0, None, None), "+3.00"),
        (fmt.rate_interval(0.0, 0.0, 0.0), "+0.00 [+0.00, +0.00]"),
        (fmt.rate_interval(float("nan"), 1.0, 2.0), "—"),
    ],
)
def test_differences_and_p_values_read_the_same_way(written: str, expected: str) -> None:
    assert written == expected


@pytest.mark.parametrize(
    ("written", "expected"),
    [
        (fmt.price("0.62"), "0.62"),
        (fmt.price(0.021), "0.021"),
        (fmt.price("1"), "1.00"),
        (fmt.price(None), "—"),
        (fmt.outcome_prices('["Yes", "No"]', '["0.62", "0.38"]'), "Yes 0.62 · No 0.38"),
        (fmt.outcome_prices(["Yes", "No"], ["1", "0"]), "Yes 1.00 · No 0.00"),
        (
            fmt.outcome_prices(
                '["A", "B", "C", "D", "E"]', '["0.1", "0.4", "0.05", "0.3", "0.15"]'
            ),
            "B 0.40 · D 0.30 · E 0.15 · +2 more",
        ),
        (fmt.outcome_prices('["Yes", "No"]', "[]"), "Yes — · No —"),
        (fmt.outcome_prices("[]", "[]"), "—"),
        (fmt.outcome_prices(None, None), "—"),
    ],
)
def test_market_prices_read_as_text_never_json(written: str, expected: str) -> None:
    assert written == expected


@pytest.mark.parametrize(
    ("written", "expected"),
    [
        (fmt.instant(pd.Timestamp("2026-03-08 00:05", tz="UTC")), "2026-03-08 00:05 UTC"),
        (fmt.instant(pd.Timestamp("2026-03-08 01:05", tz="Europe/Paris")), "2026-03-08 00:05 UTC"),
        (fmt.instant(pd.Timestamp("2026-03-08 00:05")), "2026-03-08 00:05 UTC"),
        (fmt.instant(pd.NaT), "—"),
        (fmt.instant(None), "—"),
        (fmt.seconds(0.42), "0.4 s"),
        (fmt.seconds(12.4), "12 s"),
        (fmt.seconds(185), "3 min 05 s"),
        (fmt.seconds(math.nan), "—"),
    ],
)
def test_times_and_durations_read_the_same_way(written: str, expected: str) -> None:
    assert written == expected


def test_escaped_text_cannot_become_markdown() -> None:
    assert fmt.escaped("Model A") == "Model A"
    joined = fmt.WORD_JOINER  # after the scheme: a bare URL is never autolinked
    assert fmt.escaped("[x](http://e) *b* $1") == rf"\[x\]\(http{joined}\://e\) \*b\* \$1"
    assert fmt.escaped(None) == "—"


@pytest.mark.parametrize(
    ("written", "expected"),
    [
        (fmt.signed_points(2.149), "+2.1 pp"),
        (fmt.signed_points(-0.44), "−0.4 pp"),
        (fmt.signed_points(-0.01), "+0.0 pp"),  # no "−0.0"
        (fmt.signed_points(None), "—"),
        (fmt.rank_of(2, 6), "2 of 6"),
        (fmt.rank_of(0, 6), "—"),  # rank 0: not ranked (no return yet)
        (fmt.rank_of(math.nan, 6), "—"),
    ],
)
def test_places_in_a_field_read_the_same_way(written: str, expected: str) -> None:
    assert written == expected


@pytest.mark.parametrize(
    ("written", "expected"),
    [
        (
            fmt.json_text('{"rows_written": 11, "statuses": {"ok": 11}, "missing": []}'),
            "rows written: 11 · statuses: (ok: 11) · missing: none",
        ),
        (
            fmt.json_text({"scopes": ["all", "cohort:1"], "created": False}),
            "scopes: all, cohort:1 · created: no",
        ),
        (fmt.json_text("{}"), "—"),
        (fmt.json_text(None), "—"),
        (fmt.json_text("not json"), "not json"),
    ],
)
def test_json_reads_as_a_line_never_as_json(written: str, expected: str) -> None:
    assert written == expected


def test_a_table_with_gaps_reads_dashes_not_none() -> None:
    frame = pd.DataFrame(
        {
            "amount": [400.0, float("nan")],
            "price": [0.5, 0.25],
            "at": pd.to_datetime(["2026-01-04 00:05", None], utc=True),
            "note": ["x", None],
        }
    )

    frame["shares"] = [1234.5, None]
    shown, rest = fmt.readable(
        frame, {"amount": fmt.money, "price": fmt.price, "shares": "{:,.2f}"}
    )

    assert shown["amount"].tolist() == ["$400.00", "—"]
    assert shown["at"].tolist() == ["2026-01-04 00:05", "—"]
    assert shown["note"].tolist() == ["x", "—"]
    assert shown["shares"].tolist() == ["1,234.50", "—"]
    assert shown["price"].tolist() == [0.5, 0.25]  # no gap: raw, formatted by the table
    assert rest == {"price": fmt.price}
    assert frame["amount"].isna().sum() == 1  # the caller's frame (and CSV) untouched
    assert fmt.day(pd.Timestamp("2026-01-04 05:00", tz="UTC")) == "2026-01-04"


# --------------------------------------------------------------------------------------------
# The grid's formats (`fmt.GRID_FORMATS`): what the browser writes for a column of numbers.

_PRINTF = re.compile(r"%(\+)?(,)?(?:\.(\d+))?([df])|%%")


def _sprintf(printf: str, number: float) -> str:
    """sprintf-js (Streamlit's grid) for the subset the grid formats use: "+" and "," flags,
    a precision, f and d; "%%". The sign goes before the digits, after any literal text.
    "dollar" is the grid's named currency format (Intl en-US: "-$1,234.50", two decimals)."""
    if printf == "dollar":
        return f"{'-' if number < 0 else ''}${abs(number):,.2f}"

    def one(match: re.Match[str]) -> str:
        if match.group(0) == "%%":
            return "%"
        plus, comma, places, kind = match.groups()
        value = int(number) if kind == "d" else number
        digits = (
            f"{abs(value):{',' if comma else ''}.{int(places or 6)}f}"
            if kind == "f"
            else (f"{abs(value):{',' if comma else ''}d}")
        )
        sign = "-" if number < 0 else ("+" if plus else "")
        return sign + digits

    return _PRINTF.sub(one, printf)


def _read(text: str) -> float:
    """The number a person reads in `text` (either minus sign, any $, %, s or separators)."""
    cleaned = text.replace("−", "-").replace("$", "").replace(",", "").replace("%", "")
    cleaned = cleaned.replace("+", "").replace(" s", "").replace(" pp", "").strip()
    if cleaned.startswith("--"):
        cleaned = cleaned[1:]
    return float(cleaned)


def _half_unit(text: str) -> float:
    """Half the last written digit's unit: how far the text may be from the number."""
    digits = re.search(r"\.(\d+)", text)
    return 0.5 * 10 ** -(len(digits.group(1)) if digits else 0)


GRID_SAMPLES = [0.0, 0.5, 0.62, 0.021, 1.0, 7.25, -3.1, 12.5, 756.544, -1234.5, 10756.54, 43210]


@pytest.mark.parametrize("writer", list(fmt.GRID_FORMATS), ids=lambda w: w.__name__)
def test_the_grid_writes_each_number_as_its_writer_does(writer: Any) -> None:
    """Each grid format reads as the same number as its writer's text (same sign, same
    value to the writer's precision), with the same unit ($, %, s); only the form may differ
    ("$-12.40" for "−$12.40", "0.620" for "0.62")."""
    grid = fmt.GRID_FORMATS[writer]
    for number in GRID_SAMPLES:
        if writer in (fmt.count, fmt.reference_id) and number != int(number):
            continue
        written = writer(number)
        if grid.zero_missing and number == 0:
            assert written == fmt.DASH  # the grid shows its placeholder "—" for the NaN
            continue
        drawn = _sprintf(grid.printf, number * grid.scale)
        tolerance = _half_unit(written) + _half_unit(drawn) + 1e-9  # each rounds once
        assert _read(drawn) == pytest.approx(_read(written), abs=tolerance), (written, drawn)
        for unit in ("$", "%", " s", " pp"):
            assert (unit in drawn) == (unit in written), (written, drawn)
        if grid.printf != "dollar":  # dollars: a loss keeps its minus, a gain has no "+"
            assert ("+" in drawn) == ("+" in written), (written, drawn)  # signed as written
        assert (_read(drawn) < 0) == (_read(written) < 0), (written, drawn)


def test_a_writer_without_a_grid_format_has_none() -> None:
    assert fmt.grid_format(fmt.money) == fmt.GridFormat("dollar")
    assert fmt.grid_format("{:,.2f}") == fmt.GridFormat("%,.2f")
    assert fmt.grid_format(fmt.percentile) is None
    assert fmt.grid_format("{:>10}") is None
    assert fmt.reference_id(0) == fmt.reference_id(None) == fmt.DASH
    assert fmt.reference_id(12.0) == "12"
    assert fmt.milliseconds(1234) == "1.2 s"


def test_the_split_reads_as_whole_percents_never_hiding_a_mark() -> None:
    assert fmt.realised_split(0.62, 0.38) == "62% resolved · 38% marked"
    assert fmt.realised_split(1.0, 0.0) == "100% resolved · 0% marked"
    assert fmt.realised_split(0.998, 0.002) == ">99% resolved · <1% marked"
    assert fmt.realised_split(math.nan, math.nan) == "—"
    assert fmt.realised_split(None, None) == "—"
