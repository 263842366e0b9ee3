"""A zip of export CSVs with a README: what the dashboard's Exports page downloads.

Each CSV is written by `arena.analytics.export.tables.write_csv` — the very code behind
`arena export TABLE` — so a bundle's `trades.csv` is byte for byte what `arena export trades`
prints with the same filters. The README records what a researcher needs to cite and reproduce
the slice: the methodology version and constants, when it was exported, the filters, and each
table's row count (and whether the row cap cut it short); `DATA_DICTIONARY.csv` what each
column of those tables means and its unit. Every file of a bundle is read in one
snapshot (`consistent_read`), so the files agree with each other even while the scheduler writes
(every table is as of the same instant).
"""

import io
import json
import zipfile
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import select
from sqlalchemy.engine import Connection, Engine

from arena.analytics.export.dictionary import DICTIONARY_NAME, write_dictionary
from arena.analytics.export.tables import EXPORTS, ExportFilters, ExportResult, write_csv
from arena.config import METHODOLOGY_VERSION, Methodology, is_v2
from arena.core.errors import InputError
from arena.storage.db import consistent_read
from arena.storage.tables import COHORTS, live_cohort

README_NAME = "README.txt"


@dataclass(frozen=True)
class Bundle:
    """The zip's bytes, a file name to offer, and what each table held."""

    data: bytes
    file_name: str
    results: dict[str, ExportResult]


def _cohort_constants(conn: Connection, filters: ExportFilters) -> list[dict[str, Any]]:
    """Version and constants of the cohorts in scope (all, or the filtered one)."""
    columns = (COHORTS.c.number, COHORTS.c.methodology_version, COHORTS.c.constants)
    query = select(*columns).where(live_cohort()).order_by(COHORTS.c.number)
    if filters.cohort is not None:
        query = query.where(COHORTS.c.number == filters.cohort)
    return [
        {"cohort": int(n), "version": v, "constants": c or {}} for n, v, c in conn.execute(query)
    ]


def readme_text(
    filters: ExportFilters,
    results: dict[str, ExportResult],
    exported_at: datetime,
    methodology: Methodology,
    cohort_constants: Sequence[dict[str, Any]],
) -> str:
    """The bundle's README: provenance of every file in it."""
    lines = [
        "Forecaster Arena export",
        "=======================",
        "",
        f"Exported at: {exported_at.isoformat()} (UTC)",
        f"Methodology version: {methodology.version or METHODOLOGY_VERSION}",
        "Filters: "
        + (
            ", ".join(f"{k}={v}" for k, v in filters.describe().items())
            or "none (every cohort and family, all time)"
        ),
        "",
        "Files (CSV, header row, UTC ISO-8601 times, exact decimals; the same rows and columns",
        "as `arena export TABLE` with these filters; columns per docs/contract.md §6):",
    ]
    for table, result in results.items():
        note = f" — TRUNCATED at the row cap of {result.cap}" if result.truncated else ""
        lines.append(f"  {table}.csv: {result.rows} rows{note}")
    lines += [
        f"  {DICTIONARY_NAME}: every column of these files, its meaning and unit",
        "",
        "Filters apply to each table's own time column (week_start, created_at,",
        "snapshot_timestamp, opened_at); --since is inclusive, --until exclusive; markets",
        "filtered by cohort or family are the markets they held.",
        "",
        "Methodology constants configured at export time:",
        json.dumps(methodology.stamp(), indent=2, sort_keys=True),
        "",
        "Constants each cohort in scope ran under (is_default = false marks a research run):",
    ]
    if cohort_constants:
        for item in cohort_constants:
            lines.append(
                f"  cohort {item['cohort']} ({item['version']}): "
                + json.dumps(item["constants"], sort_keys=True)
            )
    else:
        lines.append("  (no cohort in scope)")
    if any(is_v2(item["version"]) for item in cohort_constants):
        lines += V2_NOTE
    return "\n".join(lines) + "\n"


# Said only when a v2 cohort is in scope: a v1-only export's README is as it was.
V2_NOTE = [
    "",
    "Price provenance (methodology v2, docs/methodology-v2.md; empty on v1 rows): trades.csv's",
    "price_source, price_status, gamma_price, clob_price, disagreement and fallback_reason are",
    "the quote each BUY and SELL executed at; snapshots.csv's price_provenance (JSON, by",
    "position id) each open position's mark and where it came from; markets.csv's",
    "clob_token_ids the order-book tokens v2 reads.",
]


def table_csv(engine: Engine, table: str, filters: ExportFilters, cap: int) -> bytes:
    """One table's CSV alone, as `arena export TABLE` prints it (the page's single-table
    download: a researcher wanting trades needs no zip)."""
    text = io.StringIO()
    write_csv(engine, table, filters, text, cap)
    return text.getvalue().encode("utf-8")


def table_file_name(table: str, filters: ExportFilters) -> str:
    """`forecaster-arena-TABLE[-cohortN][-FAMILY].csv`, as `bundle_name` names a zip."""
    return bundle_name(filters, prefix=f"forecaster-arena-{table}").removesuffix(".zip") + ".csv"


def bundle_name(
    filters: ExportFilters,
    exported_at: datetime | None = None,
    prefix: str = "forecaster-arena-export",
) -> str:
    """A descriptive, filesystem-safe zip name (with the export time when given)."""
    parts = [prefix]
    if exported_at is not None:
        parts.append(exported_at.strftime("%Y%m%dT%H%M%SZ"))
    if filters.cohort is not None:
        parts.append(f"cohort{filters.cohort}")
    if filters.family is not None:
        parts.append("".join(c if c.isalnum() or c in "-._" else "_" for c in filters.family))
    return "-".join(parts) + ".zip"


def build_bundle(
    engine: Engine,
    tables: Sequence[str],
    filters: ExportFilters,
    *,
    cap: int,
    exported_at: datetime,
    methodology: Methodology | None = None,
) -> Bundle:
    """Write `tables` (export names, in the given order) as CSVs plus README into a zip."""
    if not tables:
        raise InputError("no table chosen", f"pick one or more of: {', '.join(EXPORTS)}")
    unknown = [t for t in tables if t not in EXPORTS]
    if unknown:
        raise InputError(
            f"unknown export table {unknown[0]!r}", f"choose from: {', '.join(EXPORTS)}"
        )
    methodology = methodology or Methodology()
    results: dict[str, ExportResult] = {}
    buffer = io.BytesIO()
    with (
        consistent_read(engine) as conn,
        zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive,
    ):
        for table in dict.fromkeys(tables):
            text = io.StringIO()
            results[table] = write_csv(conn, table, filters, text, cap)
            archive.writestr(f"{table}.csv", text.getvalue().encode("utf-8"))
        readme = readme_text(
            filters, results, exported_at, methodology, _cohort_constants(conn, filters)
        )
        archive.writestr(README_NAME, readme.encode("utf-8"))
        dictionary = io.StringIO()
        write_dictionary(dictionary, results)
        archive.writestr(DICTIONARY_NAME, dictionary.getvalue().encode("utf-8"))
    return Bundle(buffer.getvalue(), bundle_name(filters, exported_at), results)
