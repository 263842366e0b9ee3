"""Late entry (methodology §20), the pure part: which cohorts a command names, the leakage
guard, the shadow cohort's stamp, and how a late entrant is told apart from its family.

A late entrant is a family playing a finished live cohort afterwards, in a *shadow cohort*
stamped with the extension `late_entry`. It is a different entrant from its family's live
agents (its family may have played the same cohort live), so wherever late entrants are ranked
beside incumbents it carries its own id, ``late:<family>``, and its own name.
"""

import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import date, datetime
from typing import Any

from arena.core.errors import InputError

LATE_ENTRY = "late_entry"  # the extension stamped on every shadow cohort
ENTRANT_PREFIX = "late:"  # family ids never contain ":" (lineup pattern), so none collides
LATE_LABEL = " · late entry"
CONTAMINATED_LABEL = ", contaminated"
MAX_COHORTS = 520

_RANGE = re.compile(r"^\s*(\d+)\s*(?:-\s*(\d+)\s*)?$")


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

    Anything else (an empty part, a reversed range, zero) is an InputError naming the part."""
    numbers: set[int] = set()
    for part in text.split(","):
        match = _RANGE.match(part)
        if match is None:
            raise InputError(
                f"--cohorts {text!r}: {part.strip()!r} is not a cohort number or a range A-B",
                "write e.g. --cohorts 3-6 or --cohorts 2,4,7",
            )
        low = int(match.group(1))
        high = int(match.group(2) or low)
        if low < 1 or high < low:
            raise InputError(
                f"--cohorts {text!r}: {part.strip()!r} is not a range of cohort numbers",
                "cohorts are numbered from 1; a range is low-high",
            )
        if high - low >= MAX_COHORTS:
            raise InputError(f"--cohorts {text!r}: more than {MAX_COHORTS} cohorts", "name fewer")
        numbers.update(range(low, high + 1))
    return sorted(numbers)


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
