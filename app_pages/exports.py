"""Exports: pick tables, cohort, family and a time range; download a zip of CSVs with a README.

The zip is written by `arena.analytics.export.bundle.build_bundle`, which calls the code behind
`arena export TABLE` for every table, so the files match the CLI's output byte for byte.

Below it, one cohort's replay bundle (`arena bundle COHORT`): the one the hourly `bundle` job
kept (`replay_kept`), with its hash and how to check it, or, when none is kept, why not
(`replay_status`) and a button that builds a provisional bundle of the cohort so far
(`replay_bundle.build_bundle`, on the read-only engine, only when asked)."""

import io
import json
from datetime import UTC, date, datetime, time

import pandas as pd
import streamlit as st

from arena.analytics.export.bundle import build_bundle, bundle_name, table_csv, table_file_name
from arena.analytics.export.dictionary import DICTIONARY_NAME, EXPORT_DESCRIPTIONS, write_dictionary
from arena.analytics.export.tables import EXPORTS, ExportFilters
from arena.analytics.replay.bundle import build_bundle as build_replay_bundle
from arena.analytics.replay.kept import bundle_file_name, kept_bundle_zip, kept_bundles
from arena.analytics.replay.status import BUNDLE_SCHEDULE, BundleStatus, bundle_status
from arena.analytics.views.agents import FilterOptions, filter_options
from arena.analytics.views.database import family_names
from arena.analytics.views.late_entry import late_entries
from arena.config import get_settings
from arena.core.errors import InputError
from arena.core.late_entry import entrant_name
from arena.dashboard import documents, fmt, links, notices, picks, reads, tables
from arena.storage.db import get_engine

PLAN_LABELS = {
    "file": st.column_config.TextColumn("File", width="small"),
    "rows_are": st.column_config.TextColumn("One row is", width="large"),
    "columns": st.column_config.TextColumn("Columns", width="large"),
}

st.title("Exports")
st.caption(
    "A bounded slice of the benchmark's tables as CSV: one table alone, or several zipped with "
    "a README that records the methodology version and constants, the export time and the "
    "filters, and a data dictionary (every column's meaning and unit). Each CSV is exactly "
    "what `arena export TABLE --cohort N --family ID --since T --until T` prints; its columns "
    f"are fixed by [the export contract]({documents.doc_link('contract', '6-export-columns')})."
)

options: FilterOptions = reads.read(filter_options)
names: dict[str, str] = reads.read(family_names)
cols = st.columns(4)
cohort = picks.cohort_link(options.cohorts, all_label="All", container=cols[0])
family = links.select_link(
    "Family",
    "family",
    options.families,
    format_func=lambda f: "All" if f == links.ALL else names.get(f, f),
    container=cols[1],
)
since_day: date | None = cols[2].date_input("From (UTC, inclusive)", value=None, key="since")
until_day: date | None = cols[3].date_input("Until (UTC, exclusive)", value=None, key="until")
settings = get_settings()
cap = int(
    st.number_input(
        "Row cap per table", min_value=1, value=settings.export_row_cap, step=1000, key="cap"
    )
)


def _instant(day: date | None) -> datetime | None:
    return datetime.combine(day, time(0), tzinfo=UTC) if day is not None else None


filters = ExportFilters(
    cohort=cohort, family=family, since=_instant(since_day), until=_instant(until_day)
)
url = reads.database_url()


def table_label(table: str) -> str:
    return table.replace("_", " ").capitalize()


def dictionary_csv() -> bytes:
    """Every export column's meaning and unit (what `arena export dictionary` prints)."""
    out = io.StringIO()
    write_dictionary(out)
    return out.getvalue().encode("utf-8")


def one_table() -> None:
    """One table as one CSV, no zip: the table, what a row is, and its download button."""
    st.subheader("One table as CSV")
    table = st.selectbox(
        "Table",
        list(EXPORTS),
        index=list(EXPORTS).index("trades"),
        format_func=table_label,
        key="export-one",
    )
    picked = str(table)
    names_it = (
        " Its last columns name the family (`display_name`) and the exact `model` it ran."
        if "model" in EXPORTS[picked].columns
        else ""
    )
    st.caption(
        f"One row is {fmt.escaped(EXPORT_DESCRIPTIONS.get(picked, ''))}; at most {cap:,} rows."
        f"{names_it} What each column means, and its unit: `{DICTIONARY_NAME}`."
    )

    def make_csv() -> bytes:
        """Runs only when the button is clicked (deferred), on the read-only engine."""
        return table_csv(get_engine(url, role="reader"), picked, filters, cap)

    buttons = st.container(horizontal=True)
    buttons.download_button(
        f"Download {picked}.csv",
        data=make_csv,
        file_name=table_file_name(picked, filters),
        mime="text/csv",
        on_click="ignore",
        type="primary",
        key="export-one-csv",
    )
    buttons.download_button(
        f"Download {DICTIONARY_NAME}",
        data=dictionary_csv,
        file_name=DICTIONARY_NAME,
        mime="text/csv",
        on_click="ignore",
        key="export-dictionary",
    )


def csv_zip() -> None:
    """The plan of the CSV zip and its download button (nothing when no table is chosen)."""
    st.subheader("Several tables as a zip")
    chosen_tables = st.multiselect(
        "Tables", list(EXPORTS), default=list(EXPORTS), format_func=table_label, key="export-tables"
    )
    if not chosen_tables:
        notices.empty("Pick at least one table to export.")
        return
    plan = pd.DataFrame(
        {
            "file": [f"{table}.csv" for table in chosen_tables],
            "rows_are": [EXPORT_DESCRIPTIONS.get(table, "") for table in chosen_tables],
            "columns": [", ".join(EXPORTS[table].columns) for table in chosen_tables],
        }
    )
    tables.table(plan, key="export-plan", column_config=PLAN_LABELS)
    scope = [
        f"Cohort {cohort}" if cohort is not None else "Every cohort",
        f"family {names.get(family, family)}" if family is not None else "every family",
    ]
    if filters.since is not None:
        scope.append(f"from {fmt.instant(filters.since)}")
    if filters.until is not None:
        scope.append(f"until {fmt.instant(filters.until)}")
    recorded = ", ".join(f"{k}={v}" for k, v in filters.describe().items()) or "none"
    st.caption(
        f"{fmt.escaped('; '.join(scope))}; at most {cap:,} rows per table (the README "
        f"says when a table was cut). The README records the filters as `{recorded}`; "
        f"`{DICTIONARY_NAME}` what every column of these tables means."
    )
    chosen = tuple(chosen_tables)

    def make_zip() -> bytes:
        """Runs only when the button is clicked (deferred), on the read-only engine."""
        engine = get_engine(url, role="reader")
        return build_bundle(
            engine,
            chosen,
            filters,
            cap=cap,
            exported_at=datetime.now(UTC),
            methodology=settings.methodology,
        ).data

    st.download_button(
        "Download zip",
        data=make_zip,
        file_name=bundle_name(filters),
        mime="application/zip",
        on_click="ignore",
        type="primary",
        key="export-zip",
    )
    tables.download_csv(plan, "export-plan", label="Download this list as CSV")


if filters.since and filters.until and filters.since >= filters.until:
    st.error("'From' must be before 'Until': swap or widen the range.")
else:
    one_table()
    csv_zip()

# --------------------------------------------------------------------------------------------
# Replay bundle


def verify_line(file_name: str, bundle_hash: str) -> None:
    """The command that checks a downloaded bundle, ready to copy."""
    st.caption("To check it, recompute every number from the files alone:")
    st.code(f"arena verify {file_name} --hash {bundle_hash}", language="bash", wrap_lines=True)


def kept_section(number: int, kept: pd.Series, late_entry: str | None = None) -> None:
    """The bundle the hourly job kept: its hash, what it holds, the zip and how to check it
    (`late_entry`: the shadow cohort that family played of cohort `number`)."""
    bundle_hash = str(kept["bundle_hash"])
    whose = (
        f"Cohort {number}'s"
        if late_entry is None
        else f"{names.get(late_entry, late_entry)}'s late entry: cohort {number}"
    )
    st.markdown(
        f"**{whose} replay bundle**, final. Its hash (SHA-256 of its manifest), the one to cite:"
    )
    st.code(bundle_hash, language=None)
    st.caption(
        f"{fmt.count(kept['file_count'])} files, {fmt.data_size(kept['size_bytes'])} "
        f"({fmt.data_size(kept['zip_bytes'])} zipped); kept {fmt.instant(kept['built_at'])} "
        f"by the hourly `bundle` job; project version {fmt.text(kept['project_version'])}."
    )
    file_name = bundle_file_name(number, bundle_hash, late_entry)

    def kept_zip() -> bytes:
        """Read only when the button is clicked (deferred), on the read-only engine."""
        return kept_bundle_zip(get_engine(url, role="reader"), number, late_entry) or b""

    st.download_button(
        f"Download {file_name}",
        data=kept_zip,
        file_name=file_name,
        mime="application/zip",
        on_click="ignore",
        type="primary",
        key="replay-kept-zip" if late_entry is None else "replay-late-zip",
    )
    verify_line(file_name, bundle_hash)


def provisional_section(number: int, state: BundleStatus) -> None:
    """Why no bundle is kept, and a provisional one of the cohort so far, built on request."""
    st.info(
        f"No kept bundle for cohort {number} yet: it is {state.why}. The scheduler's hourly "
        f"`bundle` job ({BUNDLE_SCHEDULE}) keeps a cohort's bundle once the cohort is "
        "finished (completed, and every market it bought into resolved), and never changes "
        "it after.",
        icon=":material/schedule:",
    )
    memo = f"_replay-provisional:{url}:{number}"
    if st.button(
        f"Build a provisional bundle of cohort {number}",
        key=f"replay-build:{number}",
        help="The cohort's state so far, in the same files; takes a few seconds.",
    ):
        with st.spinner(f"Building cohort {number}'s bundle…"):
            try:
                built = build_replay_bundle(
                    get_engine(url, role="reader"), number, provisional=True
                )
            except InputError as error:
                st.error(fmt.escaped(str(error)))
                return
        files = built.bundle.files
        st.session_state[memo] = {
            "hash": built.hash,
            "zip": built.bundle.zip_bytes(),
            "files": len(files),
            "size": sum(len(data) for data in files.values()),
            "final": bool(json.loads(files["cohort.json"]).get("final")),
            "built_at": datetime.now(UTC),
        }
    made = st.session_state.get(memo)
    if made is None:
        return
    bundle_hash = str(made["hash"])
    if made["final"]:
        st.success(
            f"Built here at {fmt.instant(made['built_at'])}: cohort {number} is finished, so "
            "this is the bundle the hourly job will keep (the same bytes and hash).",
            icon=":material/check_circle:",
        )
        file_name = bundle_file_name(number, bundle_hash)
    else:
        st.warning(
            f"**Provisional, not final**: cohort {number} as it stood at "
            f'{fmt.instant(made["built_at"])} (stamped `"final": false`). Its open positions '
            "are valued at their latest prices, so its numbers may still move, and this hash "
            "is not the one that will be published.",
            icon=":material/hourglass_top:",
        )
        file_name = bundle_file_name(number, bundle_hash).removesuffix(".zip") + "-provisional.zip"
    st.markdown("Hash (SHA-256 of its manifest):")
    st.code(bundle_hash, language=None)
    st.caption(
        f"{fmt.count(made['files'])} files, {fmt.data_size(made['size'])} "
        f"({fmt.data_size(len(made['zip']))} zipped)."
    )
    st.download_button(
        f"Download {file_name}",
        data=made["zip"],
        file_name=file_name,
        mime="application/zip",
        on_click="ignore",
        key="replay-provisional-zip",
    )
    verify_line(file_name, bundle_hash)


st.subheader("Replay bundle")
st.caption(
    "Everything one cohort published, in files anyone can recompute: the lineup, every frozen "
    "market snapshot, decision, raw answer and trade, the resolutions, the portfolio "
    "snapshots and the cohort's leaderboard, with a manifest of SHA-256s. `arena verify` "
    "recomputes every number from the files alone. A bundle is always a whole cohort: the "
    "tables, family and dates above do not apply."
)
kept_all: pd.DataFrame = reads.read(kept_bundles)
if cohort is not None:
    bundle_cohort: int | None = int(cohort)
elif not options.cohorts:
    bundle_cohort = None
    notices.empty(
        "No cohort yet: a bundle is one cohort's. Run `arena start-cohort` or `make demo`."
    )
else:
    kept_numbers = set(kept_all["cohort_number"].tolist())
    newest_kept = next((n for n in options.cohorts if n in kept_numbers), options.cohorts[0])
    bundle_cohort = st.selectbox(
        "Cohort of the bundle",
        options.cohorts,
        index=options.cohorts.index(newest_kept),
        format_func=lambda n: f"Cohort {n}" + (" (bundle kept)" if n in kept_numbers else ""),
        key="replay-cohort",
        help="Pick a cohort in the Cohort filter above to link to its bundle.",
    )
if bundle_cohort is not None:
    mine = kept_all.loc[kept_all["cohort_number"] == bundle_cohort]
    if not mine.empty:
        kept_section(bundle_cohort, mine.iloc[0])
    else:
        state: BundleStatus | None = reads.read(bundle_status, bundle_cohort)
        if state is not None:
            provisional_section(bundle_cohort, state)

late_kept: pd.DataFrame = reads.read(kept_bundles, late_entry=True)
if not late_kept.empty:
    st.subheader("Late entrants' replay bundles")
    st.caption(
        "A late entrant replays a finished cohort afterwards in a shadow cohort of its own "
        "(methodology §20); its bundle holds its decisions, trades and marks with the "
        "`late_entry` record (a contaminated one says so first), and `arena verify` checks it "
        "like any other. Never pooled with the live cohorts' figures."
    )
    choices = list(zip(late_kept["cohort_number"], late_kept["late_entry_family"], strict=True))
    shadows = reads.read(late_entries)
    tainted = {
        (int(n), str(f))
        for n, f, c in zip(
            shadows["cohort_number"], shadows["family_id"], shadows["contaminated"], strict=True
        )
        if c
    }

    def late_label(i: int) -> str:
        number, family = int(choices[i][0]), str(choices[i][1])
        name = entrant_name(names.get(family, family), (number, family) in tainted)
        return f"Cohort {number} · {name}"

    picked = st.selectbox(
        "Late entrant's bundle", range(len(choices)), format_func=late_label, key="replay-late"
    )
    if picked is not None:
        number, family = choices[picked]
        if (int(number), str(family)) in tainted:
            st.warning(
                f"Contaminated: cohort {number} started on or before the knowledge cutoff of "
                f"{names.get(family, family)}, and was played anyway (`--allow-contaminated`). "
                "Its bundle says so first.",
                icon=":material/warning:",
            )
        kept_section(int(number), late_kept.iloc[picked], str(family))
