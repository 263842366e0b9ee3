"""Decisions: filter the weekly decisions, select one, and audit it end to end — the model's
rationale, its legs (with each market's question, executed or rejected and why), every
attempt with its tokens, cost and latency and raw answer, the parsed payload, the prompts and
the frozen market snapshot it saw. Model output is shown as text, never rendered."""

import pandas as pd
import streamlit as st

from arena.analytics.stats.calibration import family_names
from arena.analytics.views.agents import FilterOptions, filter_options
from arena.analytics.views.decisions import (
    DEFAULT_LIMIT,
    DecisionDetail,
    decision_detail,
    decision_weeks,
    decisions,
    response_parts,
)
from arena.analytics.views.late_entry import late_entries
from arena.dashboard import documents, fmt, links, notices, picks, provenance, reads, tables
from arena.storage.models import DECISION_ACTIONS, DECISION_STATUSES

LATE_ENTRY = documents.doc_link(
    "methodology", "20-late-entry-a-new-model-on-the-frozen-past-cohorts"
)
LIVE_DECISIONS = "Live decisions"
NO_DECISION = (
    "No decision yet: the scheduler runs `arena decide` on Sundays at :05 UTC for every "
    "cohort in its decision window (or run `arena decide`, or `make demo`)."
)


IMPLIED_CONFIDENCE = documents.doc_link(
    "methodology", "11-2-implied-confidence-from-position-sizing"
)
NOTES = documents.doc_link("methodology", "18-methodology-notes-every-interpretation-we-made")
STATED_NOTE = (
    " This cohort ran the protocol extension stated_probability: its prompt also asked, with "
    "each bet, for the probability that the side bought wins (Stated probability; the figures "
    f"are on the Stated probability page, [methodology: protocol extensions]({NOTES}))."
)


# The list's columns, sized so that the decision, its family, action, status, legs, money
# and cost are all in view at 1440 px; tokens and the serving model after.
LIST_COLUMNS = {
    "decision_id": tables.column("Decision", 70),
    "decided_at": tables.column("Decided (UTC)", 120),
    "cohort_number": tables.column("Cohort", 55),
    "display_name": tables.column("Family", 150),
    "decision_week": tables.column("Week", 45),
    "action": tables.column("Action", 65),
    "status": tables.column("Status", 100),
    "bets": tables.column("Bets", 45),
    "sells": tables.column("Sells", 45),
    "rejected": tables.column("Rejected", 65, help="Legs rejected by validation"),
    "amount": tables.column("Bet", 95, help="Dollars bet by the executed legs"),
    "cost_usd": tables.column("API cost", 80),
    "tokens_in": tables.column("Tokens in", 80, alignment="right"),
    "tokens_out": tables.column("Tokens out", 85, alignment="right"),
    "latency_ms": tables.column("Latency (ms)", 95, alignment="right"),
    "attempts": tables.column("Answers", 70, help="Model answers of the final run"),
    "served_model": tables.column("Served by", 220),
    "family_id": None,  # in the data (and the CSV), not shown: the name says it
    "market_snapshot_id": None,
}
LIST_FORMATS = {
    "amount": fmt.money,
    "cost_usd": fmt.cost,
    "tokens_in": fmt.count,
    "tokens_out": fmt.count,
    "latency_ms": fmt.count,
    "action": fmt.text,
    "served_model": fmt.text,
}
# The legs as read: what was bought (the question, the side, the money) and how confident
# that made the model look, first; ids and the rejection's wording after.
LEG_COLUMNS = {
    "leg": tables.column("Leg", 45),
    "question": tables.column("Market", 400),
    "side": tables.column("Side", 60),  # widened to its longest value (`fitted`)
    "result": tables.column("Result", 80),
    "amount": tables.column("Amount", 90, alignment="right"),
    "price": tables.column("Price", 60, alignment="right"),
    # A `stated_probability` cohort only (`stated_cells`); a v1 cohort's legs have no such column.
    "stated": tables.column(
        "Stated probability",
        240,
        help="The probability the model stated that the side it bought wins, beside the "
        "price it paid; in brackets p − price (positive: it judged the side underpriced). "
        "“not stated”: it gave none (missing, never filled in).",
    ),
    "implied_confidence": tables.column(
        "Implied confidence",
        130,
        help="Amount / 25% of the cash before the leg: v1's forecast for the Brier score",
        alignment="right",
    ),
    "shares": tables.column("Shares", 100, alignment="right"),
    "reason": tables.column("Rejected because", 130),
    "message": tables.column("Rejection message", "large"),
    "kind": tables.column("Kind", 60),
    "market_id": tables.column("Market id", 90),
    "position_id": tables.column("Position", 80),
    "executed": None,
    "requested": None,
    "probability": None,  # in the CSV, raw; shown as "stated"
}
LEG_FORMATS = {
    "amount": fmt.money,
    "price": fmt.price,
    "implied_confidence": fmt.prob,
    "shares": "{:,.2f}",
    "position_id": fmt.text,
    "question": fmt.text,
    "reason": fmt.text,
    "message": fmt.text,
}
ATTEMPT_COLUMNS = {
    "attempt_no": tables.column("Attempt", 70),
    "outcome": tables.column("Outcome", 120),
    "tokens_in": tables.column("Tokens in", 80, alignment="right"),
    "tokens_out": tables.column("Tokens out", 85, alignment="right"),
    "cost_usd": tables.column("Cost", 80, alignment="right"),
    "latency_ms": tables.column("Latency (ms)", 95, alignment="right"),
    "served_model": tables.column("Served by", 200),
    "provider": tables.column("Provider", 100),
    "error": tables.column("Error", "large"),
    "created_at": tables.column("At (UTC)", 125),
    "raw_response": None,  # shown below the table, as text
}
ATTEMPT_FORMATS = {
    "tokens_in": fmt.count,
    "tokens_out": fmt.count,
    "cost_usd": fmt.cost,
    "latency_ms": fmt.count,
    "served_model": fmt.text,
    "provider": fmt.text,
    "error": fmt.text,
}


def stated_cells(legs: pd.DataFrame) -> list[str]:
    """Each leg's stated probability as read: "stated p 0.62 vs price 0.55 (+0.07)" or "not
    stated" on a BUY (an executed BET leg), "—" on a leg that bought nothing."""
    return [
        fmt.stated_probability(p, paid) if kind == "BET" and executed else fmt.DASH
        for kind, executed, p, paid in zip(
            legs["kind"], legs["executed"], legs["probability"], legs["price"], strict=True
        )
    ]


def show_raw(raw: str) -> None:
    """A raw answer as text, a reasoning model's thinking apart from the rest (inside an
    expander: no nested expander, so both as text blocks with a caption each)."""
    thinking, answer = response_parts(raw)
    if not thinking:
        st.code(raw, language=None, wrap_lines=True)
        return
    st.caption(f"Model's thinking ({len(thinking):,} characters)")
    st.code(thinking, language=None, wrap_lines=True)
    st.caption("Answer outside the thinking")
    st.code(answer or "(nothing outside the thinking)", language=None, wrap_lines=True)


def final_attempt(detail: DecisionDetail) -> int | None:
    """Position in the attempt log of the answer the decision was read from (the last
    attempt whose raw text is the decision's), so it is shown once."""
    if detail.raw_response is None:
        return None
    raws = detail.attempt_log["raw_response"]
    matches = [
        i for i, raw in enumerate(raws) if not fmt.missing(raw) and raw == detail.raw_response
    ]
    return matches[-1] if matches else None


def rationale(detail: DecisionDetail) -> None:
    """The model's own rationale (its answer's "reasoning"), its thinking and its raw answer."""
    with st.container(border=True):
        st.markdown("**Rationale** — the model's own words, as parsed from its answer")
        if detail.reasoning:
            st.text(detail.reasoning, width="stretch")
        elif detail.parsed_response is None:
            st.caption(
                "No rationale: nothing could be parsed from the answer"
                + (" (a fallback HOLD; see Parsed payload)." if detail.validation_errors else ".")
            )
        else:
            st.caption("No rationale: the answer gave no reasoning.")
        for note in detail.notes:
            st.text(f"Note: {note}", width="stretch")
        raw = detail.raw_response
        if not raw:
            return
        thinking, answer = response_parts(raw)
        if thinking:
            with st.expander(f"Model's thinking ({len(thinking):,} characters)"):
                st.code(thinking, language=None, wrap_lines=True)
        with st.expander(f"Raw response ({len(raw):,} characters)"):
            if thinking:
                st.caption("Answer outside the thinking")
                st.code(answer or "(nothing outside the thinking)", language=None, wrap_lines=True)
            else:
                st.code(raw, language=None, wrap_lines=True)


st.title("Decisions")
options: FilterOptions = reads.read(filter_options)
if not options.cohorts:
    notices.nothing_yet(NO_DECISION)
notices.simulated_notice()
names: dict[str, str] = reads.read(family_names)

late: pd.DataFrame = reads.read(late_entries)
entrant_families = sorted(set(late["family_id"]))
cols = st.columns(6 if entrant_families else 5)
cohort = picks.cohort_link(options.cohorts, all_label="All", container=cols[0])
family = links.select_link(
    "Family",
    "family",
    options.families,
    container=cols[1],
    format_func=lambda f: f if f == links.ALL else names.get(f, f),
)
# A late entrant's decisions (methodology §20), never listed with the live ones.
late_family = (
    links.select_link(
        "Late entrant",
        "late",
        entrant_families,
        default=LIVE_DECISIONS,
        container=cols[5],
        format_func=lambda f: f if f == LIVE_DECISIONS else f"{names.get(f, f)} · late entry",
        help="The decisions a late entrant made replaying past cohorts' frozen runs.",
    )
    if entrant_families
    else LIVE_DECISIONS
)
late_entry = None if late_family == LIVE_DECISIONS else str(late_family)
week_value = links.select_link("Week", "week", reads.read(decision_weeks), container=cols[2])
action = links.select_link("Action", "action", list(DECISION_ACTIONS), container=cols[3])
status = links.select_link("Status", "status", list(DECISION_STATUSES), container=cols[4])

# A decision link is checked before the list, so one naming nothing warns near the top.
decision_value = links.get_link("decision")
decision_id = links.link_int("decision")
detail: DecisionDetail | None = (
    None if decision_id is None else reads.read(decision_detail, decision_id)
)
if decision_value is not None and detail is None:
    links.names_nothing("decision", "decision", decision_value)

listing: pd.DataFrame = reads.read(
    decisions,
    cohort=cohort,
    family=None if late_entry else family,
    week=week_value,
    action=action,
    status=status,
    limit=DEFAULT_LIMIT,
    late_entry=late_entry,
)
if late_entry is not None:
    st.caption(
        f"The decisions of {names.get(late_entry, late_entry)} as a late entrant: each made "
        "afterwards on a past cohort's frozen decision run, never pooled with the live ones "
        f"([late entry]({LATE_ENTRY})); the Family filter does not apply."
    )
if listing.empty:
    notices.empty("No decision matches these filters: widen them (set a filter back to All).")
else:
    st.caption(
        notices.listed(len(listing), DEFAULT_LIMIT, "decision(s)", "newest first")
        + " Select a row to audit it."
    )
    shown, formats = fmt.readable(listing[list(LIST_COLUMNS)], LIST_FORMATS)
    tables.pick_link(
        shown,
        key=f"decisions-table:{cohort}:{family}:{week_value}:{action}:{status}:{late_entry}",
        link="decision",
        column="decision_id",
        formats=formats,
        column_config=LIST_COLUMNS,
    )
    tables.download_csv(listing, "decisions")
    # A row picked (or cleared) in this run has just rewritten the link: follow it now.
    picked = links.link_int("decision")
    if picked != decision_id:
        detail = None if picked is None else reads.read(decision_detail, picked)


def show_decision(detail: DecisionDetail) -> None:
    """One decision end to end: summary, rationale, then a tab each for legs, attempts,
    payload and prompts."""
    st.divider()
    st.header(f"Decision {detail.decision_id}")
    st.text(
        f"{detail.display_name} — cohort {detail.cohort_number}, week {detail.decision_week} — "
        f"{detail.action or 'no action yet'} — status {detail.status}"
    )
    if detail.late_entry is not None:
        entry = detail.late_entry
        tainted = (
            " Contaminated: the cohort started on or before the family's knowledge cutoff, "
            "and was played anyway."
            if entry.contaminated
            else ""
        )
        (st.warning if entry.contaminated else st.info)(
            f"A late entrant's decision: made {fmt.instant(entry.played_at)} on cohort "
            f"{entry.of}'s frozen decision run of week {detail.decision_week} "
            f"([late entry]({LATE_ENTRY})).{tainted}",
            icon=":material/history:",
        )
    show_summary(detail)
    rationale(detail)
    legs_tab, prices_tab, attempts_tab, parsed_tab, prompt_tab = st.tabs(
        ["Legs", "Prices", "Attempts", "Parsed payload", "Prompts"]
    )
    with legs_tab:
        show_legs(detail)
    with prices_tab:
        show_prices(detail)
    with attempts_tab:
        show_attempts(detail)
    with parsed_tab:
        show_parsed(detail)
    with prompt_tab:
        show_prompts(detail)


def show_summary(detail: DecisionDetail) -> None:
    """The headline numbers, who answered and when, the snapshot it saw, and any error."""
    legs = detail.legs
    executed = legs[legs["executed"]]
    top = st.columns(5)
    top[0].metric("Legs executed", f"{len(executed)} / {len(legs)}")
    sold = executed.loc[executed["kind"] == "SELL", "amount"].sum()
    if sold:
        top[1].metric("Sold", fmt.money(sold))
    else:
        top[1].metric("Bet", fmt.money(executed.loc[executed["kind"] == "BET", "amount"].sum()))
    top[2].metric("Answers (final run)", detail.attempts)
    top[3].metric("API cost", fmt.cost(detail.cost_usd))
    top[4].metric("Latency", f"{detail.latency_ms:,} ms")
    decided = f"{detail.decided_at:%Y-%m-%d %H:%M:%S} UTC" if detail.decided_at else "—"
    st.caption(
        f"Tokens {detail.tokens_in:,} in / {detail.tokens_out:,} out · configured model "
        f"{fmt.escaped(detail.model_id)} · served by {fmt.escaped(detail.served_model)} · "
        f"provider {fmt.escaped(detail.provider)} · decided {decided} · "
        f"{len(detail.attempt_log)} model call(s) logged, retries included (each in Attempts)"
    )
    if detail.market_snapshot_id:
        taken = f"{detail.snapshot_taken_at:%Y-%m-%d %H:%M} UTC" if detail.snapshot_taken_at else ""
        st.page_link(
            "app_pages/markets.py",
            label=f"Market snapshot #{detail.market_snapshot_id} it saw ({detail.snapshot_markets} "
            f"markets, {taken})",
            icon=":material/show_chart:",
            query_params={"snapshot": str(detail.market_snapshot_id)},
        )
    if detail.error:
        st.error("Error recorded on this decision:")
        st.code(detail.error, language=None, wrap_lines=True)


def show_legs(detail: DecisionDetail) -> None:
    """The Legs tab: every leg, executed or rejected (with why), and its CSV."""
    legs = detail.legs
    if legs.empty:
        st.text("No legs: a HOLD, or nothing parsed.")
        return
    read_as = {"result": ["executed" if e else "rejected" for e in legs["executed"]]}
    if detail.asks_probability:
        read_as["stated"] = stated_cells(legs)
    table = legs.assign(**read_as)
    shown, formats = fmt.readable(
        table[[c for c in LEG_COLUMNS if c in table.columns]], LEG_FORMATS
    )
    tables.table(
        shown,
        key="decision-legs",
        formats=formats,
        column_config=LEG_COLUMNS
        | {"side": tables.column("Side", tables.fitted(legs["side"]))}
        # the stated probability in view beside the price: a narrower question
        | ({"question": tables.column("Market", 300)} if detail.asks_probability else {}),
    )
    rejected = legs[~legs["executed"]]
    for _, leg in rejected.iterrows():
        st.text(
            f"Leg {leg['leg']} rejected ({fmt.text(leg['reason'])}): "
            f"{fmt.text(leg['message'])} — {fmt.text(leg['question'])}",
            width="stretch",
        )
    st.caption(
        "Implied confidence = amount / (25% of the cash before the leg): v1 scores it as "
        f"the forecast ([methodology: implied confidence]"
        f"({IMPLIED_CONFIDENCE}))." + (STATED_NOTE if detail.asks_probability else "")
    )
    tables.download_csv(legs, f"decision-{detail.decision_id}-legs", label="Download legs CSV")


def show_prices(detail: DecisionDetail) -> None:
    """The Prices tab: where each trade's price and each price of the frozen universe it saw
    came from (order-book midpoint, Gamma with the fallback reason, or Gamma under v1)."""
    st.markdown("**Trades**")
    provenance.trade_prices(detail.decision_id)
    if detail.market_snapshot_id:
        st.markdown(
            f"**The frozen universe it saw** (market snapshot #{detail.market_snapshot_id})"
        )
        provenance.universe_prices(detail.market_snapshot_id, key="decision-universe-prices")


def show_attempts(detail: DecisionDetail) -> None:
    """The Attempts tab: every model call logged, each raw answer but the final one (shown
    under Rationale), and the log's CSV."""
    log = detail.attempt_log
    if log.empty:
        st.text("No attempt was recorded (the decision may still be in progress).")
        return
    shown, formats = fmt.readable(log[list(ATTEMPT_COLUMNS)], ATTEMPT_FORMATS)
    tables.table(shown, key="decision-attempts", formats=formats, column_config=ATTEMPT_COLUMNS)
    final = final_attempt(detail)
    for position, (_, attempt) in enumerate(log.iterrows()):
        show_attempt(attempt, final=position == final)
    tables.download_csv(
        log, f"decision-{detail.decision_id}-attempts", label="Download attempts CSV"
    )


def show_attempt(attempt: pd.Series, *, final: bool) -> None:
    """One logged call. Captions and labels render Markdown: the provider's and the model's
    words (the outcome, the error) are escaped there."""
    title = f"Attempt {int(attempt['attempt_no'])} — {fmt.escaped(attempt['outcome'])}"
    raw, error = attempt["raw_response"], attempt["error"]
    if final:
        rejected = f" Rejected: {fmt.escaped(error)}" if not fmt.missing(error) else ""
        st.caption(f"{title}: its answer is the raw response under Rationale, above.{rejected}")
    elif fmt.missing(raw):
        st.caption(title + (f" — {fmt.escaped(error)}" if not fmt.missing(error) else ""))
        st.text("(no response body)")
    else:
        with st.expander(f"{title} · raw response ({len(str(raw)):,} characters)"):
            if not fmt.missing(error):
                st.caption(f"Rejected: {fmt.escaped(error)}")
            show_raw(str(raw))


def show_parsed(detail: DecisionDetail) -> None:
    """The Parsed payload tab: validation errors, then the JSON as parsed."""
    if detail.validation_errors:
        st.markdown("**Validation errors (one per malformed attempt)**")
        for error in detail.validation_errors:
            st.text(f"• {error}")
    st.code(detail.parsed_json or "(nothing parsed)", language="json", wrap_lines=True)


def show_prompts(detail: DecisionDetail) -> None:
    """The Prompts tab: exactly what the model was sent."""
    st.markdown("**System prompt**")
    st.code(detail.prompt_system or "", language=None, wrap_lines=True, height=300)
    st.markdown("**User prompt**")
    st.code(detail.prompt_user or "", language=None, wrap_lines=True, height=500)


if detail is not None:
    show_decision(detail)
