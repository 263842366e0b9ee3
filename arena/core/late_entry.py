"""Late entry (methodology §20), the pure part: which cohorts a command names, the leakage
guard, the shadow cohort's stamp, how a late entrant is told apart from its family, which
failed model call is the endpoint's (the week not played, §18) and the lines that say so.

A late entrant is a family playing a finished live cohort afterwards, in a *shadow cohort*
stamped with the extension `late_entry`. It is a different entrant from its family's live
agents (its family may have played the same cohort live), so wherever late entrants are ranked
beside incumbents it carries its own id, ``late:<family>``, and its own name.
"""

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import date, datetime
from typing import Any

from arena.core.errors import ArenaError, UsageError

LATE_ENTRY = "late_entry"  # the extension stamped on every shadow cohort
ENTRANT_PREFIX = "late:"  # family ids never contain ":" (lineup pattern), so none collides
LATE_LABEL = " · late entry"
CONTAMINATED_LABEL = ", contaminated"
MAX_COHORTS = 520
# The largest cohort number: the cohorts table's INTEGER (4 bytes on PostgreSQL, which refuses
# to compare it with anything larger), as the CLI's `MAX_COHORT`.
MAX_COHORT_NUMBER = 2**31 - 1
COHORTS_HINT = "write e.g. --cohorts 3-6 or --cohorts 2,4,7 (see `arena late-entry --help`)"

# ASCII digits only: `\d` and int() also take fullwidth (１２) and Arabic-Indic (١٢) digits.
_RANGE = re.compile(r"^\s*([0-9]+)\s*(?:-\s*([0-9]+)\s*)?$", re.ASCII)


def entrant_id(family_id: str) -> str:
    """A late entrant's id where it is ranked beside incumbents: ``late:<family>``."""
    return f"{ENTRANT_PREFIX}{family_id}"


def is_entrant(ranked_id: str) -> bool:
    """Whether a ranked id (a leaderboard row's) is a late entrant's."""
    return ranked_id.startswith(ENTRANT_PREFIX)


def entrant_family(ranked_id: str) -> str:
    """The family a ranked id plays (a late entrant's family, or the id itself)."""
    return ranked_id[len(ENTRANT_PREFIX) :] if is_entrant(ranked_id) else ranked_id


def entrant_name(display_name: str, contaminated: bool) -> str:
    """A late entrant as a person reads it: "Qwen 3 · late entry" (", contaminated" when its
    cohorts started before its knowledge cutoff and were played anyway)."""
    return f"{display_name}{LATE_LABEL}{CONTAMINATED_LABEL if contaminated else ''}"


def parse_cohorts(text: str) -> list[int]:
    """`--cohorts` as cohort numbers, ascending and unique: ``3-6``, ``2,4,7``, ``1-3,8``.

    Anything else (an empty part, digits other than ASCII, a reversed range, zero, a number
    past `MAX_COHORT_NUMBER`) is a UsageError naming the option and the part: exit 2 before
    anything runs, as an integer option out of its range."""
    numbers: set[int] = set()
    for part in text.split(","):
        match = _RANGE.match(part)
        if match is None:
            raise UsageError(
                f"--cohorts {text!r}: {part.strip()!r} is not a cohort number or a range A-B "
                "(ASCII digits)",
                COHORTS_HINT,
            )
        low, high = _number(text, match.group(1)), _number(text, match.group(2) or match.group(1))
        if low < 1 or high < low:
            raise UsageError(
                f"--cohorts {text!r}: {part.strip()!r} is not a range of cohort numbers",
                "cohorts are numbered from 1; a range is low-high (see `arena late-entry --help`)",
            )
        if high - low >= MAX_COHORTS:
            raise UsageError(
                f"--cohorts {text!r}: more than {MAX_COHORTS} cohorts",
                "name fewer (see `arena late-entry --help`)",
            )
        numbers.update(range(low, high + 1))
    return sorted(numbers)


def _number(text: str, digits: str) -> int:
    """One cohort number of `--cohorts`, refused past `MAX_COHORT_NUMBER` before int() reads
    it (int() refuses more than 4,300 digits with a ValueError of its own)."""
    if len(digits.lstrip("0")) > len(str(MAX_COHORT_NUMBER)) or int(digits) > MAX_COHORT_NUMBER:
        shown = digits if len(digits) <= 24 else f"{digits[:20]}… ({len(digits):,} digits)"
        raise UsageError(
            f"--cohorts {text if len(text) <= 40 else text[:40] + '…'!r}: {shown} is past the "
            f"largest cohort number, {MAX_COHORT_NUMBER}",
            COHORTS_HINT,
        )
    return int(digits)


@dataclass(frozen=True)
class GuardVerdict:
    """What the leakage guard says of one cohort: `allowed`, and whether the shadow is to be
    stamped contaminated (played although the guard refused it)."""

    allowed: bool
    contaminated: bool
    reason: str | None = None


def leakage_guard(
    number: int, week_start: datetime, cutoff: date | None, allow_contaminated: bool
) -> GuardVerdict:
    """The leakage guard (methodology §20.2): a cohort whose week starts on or before the
    family's knowledge cutoff could be answered from memory of its outcomes, so it is refused
    (one line naming both dates); a family without a cutoff is refused too. With
    `allow_contaminated` it is played anyway and stamped contaminated."""
    start = week_start.date()
    if cutoff is None:
        reason = (
            f"cohort {number} (week of {start:%Y-%m-%d}): the family states no "
            "knowledge_cutoff, so leakage cannot be ruled out"
        )
    elif start <= cutoff:
        reason = (
            f"cohort {number} starts {start:%Y-%m-%d}, on or before the family's knowledge "
            f"cutoff {cutoff:%Y-%m-%d}"
        )
    else:
        return GuardVerdict(True, False)
    return GuardVerdict(allow_contaminated, allow_contaminated, reason)


@dataclass(frozen=True)
class LateEntryStamp:
    """The `late_entry` record of a shadow cohort's stamp."""

    of: int  # the original (live) cohort's number
    family: str
    played_at: datetime  # when the late entry was started
    contaminated: bool
    knowledge_cutoff: date | None

    def record(self) -> dict[str, Any]:
        return {
            "of": self.of,
            "family": self.family,
            "played_at": self.played_at.isoformat(),
            "contaminated": self.contaminated,
            "knowledge_cutoff": None
            if self.knowledge_cutoff is None
            else self.knowledge_cutoff.isoformat(),
        }


def shadow_stamp(original: Mapping[str, Any], entry: LateEntryStamp) -> dict[str, Any]:
    """A shadow cohort's constants: its original's stamp (so it plays by the same version and
    extensions), with `late_entry` among the extensions and the entry's record under it."""
    stamp = dict(original)
    stamp.pop("is_default", None)
    names = original.get("extensions")
    extensions = [str(n) for n in names] if isinstance(names, list | tuple) else []
    stamp["extensions"] = sorted({*extensions, LATE_ENTRY})
    stamp[LATE_ENTRY] = entry.record()
    stamp["is_default"] = False  # kept last, as in every stamp
    return stamp


def stamped_late_entry(constants: Mapping[str, Any] | None) -> LateEntryStamp | None:
    """The late entry a cohort's stamp records (None: a live cohort)."""
    raw = (constants or {}).get(LATE_ENTRY)
    if not isinstance(raw, Mapping):
        return None
    cutoff = raw.get("knowledge_cutoff")
    return LateEntryStamp(
        of=int(raw["of"]),
        family=str(raw["family"]),
        played_at=datetime.fromisoformat(str(raw["played_at"])),
        contaminated=bool(raw.get("contaminated")),
        knowledge_cutoff=date.fromisoformat(str(cutoff)) if cutoff else None,
    )


# A late entry stops after this many decisions in a row lost to the endpoint (the same week
# asked again each time: no later week may be played over it).
OUTAGE_STOP_AFTER = 3
# Statuses that are the endpoint's or the account's answer, not the model's: a timeout, a rate
# limit, a key refused (401), no credits (402), a model the key may not use (403).
OUTAGE_STATUSES = frozenset({401, 402, 403, 408, 429})


def is_outage(kind: str, status: int | None) -> bool:
    """Whether a failed model call (the client's error kind and HTTP status, after its own
    retries) is the endpoint's failure: the week was never put to the model, so it is not
    played. A model's malformed answer never gets here (it is retried, then a fallback HOLD),
    and a provider's error in a 200 or a 400/404/422 is the week's played `error`, as live."""
    if kind == "transport":
        return True
    return kind == "http" and status is not None and (status >= 500 or status in OUTAGE_STATUSES)


class LateEntryStopped(ArenaError):
    """A late entry the endpoint stopped before its work was done: one line, exit 1, after the
    summary of what was played (`played`: the engine's result so far, when there is one)."""

    played: Any = None


def unreachable(family: str, endpoint: str, reason: str) -> LateEntryStopped:
    """The probe before the first week found the endpoint down: nothing was written."""
    return LateEntryStopped(
        f"late entry of {family} not started: the LLM endpoint {endpoint} is unreachable "
        f"({reason}); nothing was played",
        "start it (the family's base_url, else ARENA_LLM_BASE_URL) and run the same command again",
    )


def outage_stop(
    family: str, endpoint: str, cohort: int, week: int, failures: int, last: str
) -> LateEntryStopped:
    """The endpoint failed `failures` times in a row at cohort `cohort`'s week `week`."""
    return LateEntryStopped(
        f"late entry of {family} stopped at cohort {cohort} week {week}: the LLM endpoint "
        f"{endpoint} failed {failures} times in a row (last: {last}); the weeks before it are "
        "kept and this one is not played",
        "run the same command again once the endpoint answers: it resumes at cohort "
        f"{cohort} week {week}",
    )


@dataclass(frozen=True)
class HeldRun:
    """A replayed decision another process holds `in_progress` (its claim not yet stale)."""

    decision_id: int
    model: str
    cohort: int  # the original (live) cohort's number
    week: int
    since: datetime  # when it was claimed
    stale_at: datetime  # when a run may take the claim over (a killed process's)


def held_line(held: Sequence[HeldRun]) -> str:
    """What a rerun says of the runs it found held: which, since when, and what to do."""
    named = "; ".join(
        f"decision {h.decision_id} ({h.model}, cohort {h.cohort} week {h.week}) since "
        f"{h.since:%Y-%m-%d %H:%M} UTC"
        for h in held
    )
    verb = "is" if len(held) == 1 else "are"
    stale = max(h.stale_at for h in held)
    return (
        f"not finished: {named} {verb} held in_progress by another run — let that run finish; "
        f"if it died, run the same command again after {stale:%Y-%m-%d %H:%M} UTC, when its "
        "claim goes stale and is taken over"
    )
