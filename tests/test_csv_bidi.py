"""Bidi controls in CSV cells: every CSV the project writes from database text (`arena
export`, the export bundle, the leaderboard's and detectability's CSV, the pages' "Download
CSV") shows a RIGHT-TO-LEFT OVERRIDE and its family as visible escapes, and leaves clean text
byte for byte as it was."""

import csv
import io

import pandas as pd
from hypothesis import given
from hypothesis import strategies as st
from sqlalchemy import update
from sqlalchemy.engine import Engine

from arena.analytics.export.tables import ExportFilters, write_csv
from arena.analytics.stats.leaderboard import write_leaderboard_csv
from arena.core.csvsafe import cell, neutralise
from arena.dashboard.tables import csv_text
from arena.storage.tables import MARKETS
from tests.factories import seed_basic

BIDI = [chr(c) for c in (0x061C, 0x200E, 0x200F, *range(0x202A, 0x202F), *range(0x2066, 0x206A))]
# A file name that a RIGHT-TO-LEFT OVERRIDE shows as "…exe.txt" while it ends in ".exe".
SPOOF = "invoice\u202etxt.exe"


def test_every_bidi_control_is_an_escape_a_reader_sees() -> None:
    assert len(BIDI) == 12
    for char in BIDI:
        shown = neutralise(f"a{char}b")
        assert shown == f"a\\u{ord(char):04x}b" and char not in shown
    assert neutralise("\u202e=1+1") == "\\u202e=1+1"  # escaped first: no longer a formula
    assert neutralise("=1+1") == "'=1+1"
    assert cell({"q": SPOOF}) == '{"q": "invoice\\u202etxt.exe"}'  # still the same JSON


@given(st.text().filter(lambda text: not any(char in text for char in BIDI)))
def test_text_without_bidi_controls_is_unchanged(text: str) -> None:
    from arena.core.csvsafe import bidi_escaped

    assert bidi_escaped(text) is text


def test_export_leaderboard_and_page_csvs_escape_bidi_controls(engine: Engine) -> None:
    seed_basic(engine)
    with engine.begin() as conn:
        conn.execute(update(MARKETS).where(MARKETS.c.id == "900001").values(question=SPOOF))
    out = io.StringIO()
    write_csv(engine, "markets", ExportFilters(), out, 1000)
    rows = {row["market_id"]: row for row in csv.DictReader(io.StringIO(out.getvalue()))}
    assert rows["900001"]["question"] == "invoice\\u202etxt.exe"
    assert "\u202e" not in out.getvalue()

    frame = pd.DataFrame({"display_name": [SPOOF, "Clean"], "total_pnl": [-1.5, 2.0]})
    board = io.StringIO()
    write_leaderboard_csv(frame, board)
    page = csv_text(frame)
    for text in (board.getvalue(), page):
        assert "invoice\\u202etxt.exe" in text and "\u202e" not in text, text
        assert "Clean" in text
