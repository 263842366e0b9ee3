"""A replay bundle's README.txt: what the bundle is and what each file holds.

Why apart from `replay.bundle`: the text is long and says what the bundle is first; a late
entrant's shadow (methodology §20) opens with whose shadow it is, and a contaminated one with
that, where a reader looks first. A live cohort's README keeps its bytes.
"""

from arena.core.late_entry import LateEntryStamp


def readme(
    cohort: int, v2: bool = False, walks: bool = False, late: LateEntryStamp | None = None
) -> str:
    """The bundle's README; a v2 cohort's names its price provenance, a `book_execution`
    one its books (a v1 one is as before); a late entrant's shadow says so first, and first
    of all when it is contaminated (`late_header`), and names its marks' sources."""
    text = _V1_README.format(cohort=cohort)
    if late is None:
        marks = (_V2_MARKS_NOTE if v2 else "") + (_BID_MARKS_NOTE if walks and not v2 else "")
    else:
        marks = _LATE_MARKS_NOTE
        text = late_header(late) + text.split("\n", 2)[2]
    notes = marks + (_V2_PRICES_NOTE if v2 else "") + (_BOOKS_NOTE if walks else "")
    return text.replace(_V1_FILES_END, _V1_FILES_END + notes) if notes else text


def late_header(late: LateEntryStamp) -> str:
    """What a late entrant's bundle says before anything else: whose shadow it is, and a
    contaminated one that it is."""
    cutoff = late.knowledge_cutoff.isoformat() if late.knowledge_cutoff else "none stated"
    warning = (
        f"CONTAMINATED: cohort {late.of} started on or before this family's knowledge cutoff\n"
        f"({cutoff}): the model may have known how its markets ended. It was played anyway\n"
        "(--allow-contaminated) and every figure of it is stamped contaminated.\n\n"
        if late.contaminated
        else ""
    )
    return (
        f"Forecaster Arena replay bundle: cohort {late.of}, late entrant {late.family}\n\n"
        f"{warning}"
        f"Late entry (methodology §20): family {late.family} played cohort {late.of}'s decision\n"
        f"runs afterwards (played at {late.played_at.isoformat()}, knowledge cutoff {cutoff}),\n"
        "each on the frozen markets and prices the live cohort saw. This bundle is its shadow\n"
        f"cohort: one agent; the incumbents are in cohort {late.of}'s own bundle. MANIFEST.json\n"
        "and cohort.json carry the late_entry record (of, family, played_at, contaminated,\n"
        "knowledge_cutoff); its leaderboard row also gives its rank beside the incumbents.\n\n"
    )


_V1_FILES_END = "  leaderboard.jsonl         the cohort leaderboard's point estimates\n"
_V2_MARKS_NOTE = (
    "  marks.jsonl               methodology v2: each open position's mark and its\n"
    "                            provenance every snapshot slot, as runs of unchanged records\n"
)
_V2_PRICES_NOTE = (
    "\n"
    "Methodology v2 (docs/methodology-v2.md): each frozen market's outcomes carry their quotes\n"
    "(source, status, Gamma and CLOB prices, disagreement, fallback reason), each BUY and SELL\n"
    "trade the quote it executed at, and the leaderboard its capital and portfolio value (v2\n"
    "ranks by portfolio value). `arena verify` recomputes execution, every snapshot's value and\n"
    "the leaderboard from these recorded prices.\n"
)
_BID_MARKS_NOTE = (
    "  marks.jsonl               extension book_execution: each open position's bid mark and\n"
    "                            its record every snapshot slot, as runs of unchanged records\n"
)
_BOOKS_NOTE = (
    "  books.jsonl               extension book_execution: per decision run, the stored\n"
    "                            order books (price:size text a side) of every market a leg\n"
    "                            named, each outcome's token, and the market's fee schedule\n"
    "\n"
    "Extension book_execution (docs/book-execution.md): each BUY and SELL walked its token's\n"
    "book; its trade carries the walk (book_fill). `arena verify` walks the bundled books again\n"
    "with the engine's planner: VWAP, shares, fee, partial fills and refusals.\n"
)
_V1_README = """Forecaster Arena replay bundle: cohort {cohort}

Every number this cohort published can be recomputed from these files alone:

    arena verify THIS_FOLDER_OR_ZIP

MANIFEST.json lists every file with its SHA-256; the bundle's hash is the SHA-256 of
MANIFEST.json itself. Files (JSON Lines unless noted; money as exact decimal text, instants
in UTC):

  cohort.json               the cohort, its methodology version and stamped constants
  lineup.jsonl              agents: family, display name, model id, kind, start and end cash
  market_snapshots.jsonl    every frozen market snapshot a decision run used (prices shown)
  decisions.jsonl           prompts (system + user), final answer, parsed action, each leg's
                            outcome (executed, or rejected with its reason), tokens, cost
  attempts.jsonl            every HTTP attempt: raw answer, error, tokens, cost, latency
  trades.jsonl              BUY, SELL, SETTLE and REFUND trades in the order they happened
  positions.jsonl           every position's final state
  markets.jsonl             the traded markets' resolution fields (closed, UMA status,
                            outcome prices) and the settlement recorded
  brier_scores.jsonl        one Brier row per resolved BUY
  portfolio_snapshots.csv   the cohort's portfolio value every snapshot slot
  leaderboard.jsonl         the cohort leaderboard's point estimates

The methodology and the bundle format: docs/methodology.md and docs/contract.md of the
Forecaster Arena repository.
"""


_LATE_MARKS_NOTE = (
    "  marks.jsonl               late entry: each open position's mark every snapshot slot\n"
    "                            and where it came from (run: the run's frozen price;\n"
    "                            clob_history: the CLOB's price history; carried: the last\n"
    "                            mark), as runs of unchanged records\n"
)
