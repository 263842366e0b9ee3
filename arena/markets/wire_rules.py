"""What the arena takes from an outside answer (Gamma, the CLOB): numbers and texts, bounded.

Why one module: every number read from Gamma or the CLOB becomes a Decimal that the walk,
the fee curve and the stored text must survive, and every text lands in a column with a
width (or an index with a row limit). A value beyond its rule is refused where it enters,
by the wire parsers, so nothing downstream (a walk, an INSERT on PostgreSQL) ever meets it.

- **Numbers** are read from their text with a length cap *before* `Decimal()`, and their
  fixed-point text (what `format(x, "f")` writes, the form a book level is stored in) is
  bounded too, computed from the digits and exponent without writing it: `1E+999999` is 9
  characters as sent and a megabyte as stored.
- **Texts** have a length and, where the value is an identifier, a character rule
  (`bounded_text`); free text meant for people is cut with a visible marker instead
  (`clipped`), since a cut question is still a question but a cut id is another id.
"""

from __future__ import annotations

import re
from decimal import Decimal

from arena.core.book_text import MAX_NUMBER_CHARS, fixed_width
from arena.core.money import to_decimal
from arena.core.text import storable

# MAX_NUMBER_CHARS (32) is the widest number a stored column holds (`decision_books.tick_size`,
# String(32)); real ones are under 20 characters ("454511.68"). An int needing more bits than
# this has more than 32 decimal digits.
_MAX_INT_BITS = 107
CLIP_MARKER = " […cut by the arena]"


def bounded_decimal(value: object, max_chars: int = MAX_NUMBER_CHARS) -> Decimal:
    """An exact, finite Decimal from a JSON number or a numeric string whose text, as sent
    and as written out in fixed point, is at most `max_chars` characters (ValueError else).
    Floats are read through their shortest repr, as `arena.core.money.to_decimal` does."""
    if value is None:
        raise ValueError("missing number")
    if isinstance(value, bool):
        raise ValueError("a boolean is not a number")
    if isinstance(value, int) and value.bit_length() > _MAX_INT_BITS:
        raise ValueError(f"a number of more than {max_chars} digits")
    if isinstance(value, str) and len(value) > max_chars:
        raise ValueError(f"a number written in {len(value)} characters (at most {max_chars})")
    if not isinstance(value, int | float | str | Decimal):
        raise ValueError(f"not a number: {type(value).__name__}")
    number = to_decimal(value)
    width = fixed_width(number)
    if width > max_chars:
        shown = str(value)[:max_chars]
        raise ValueError(f"{shown} is {width} characters in fixed point (at most {max_chars})")
    return number


def bounded_text(
    value: object, what: str, max_chars: int, pattern: re.Pattern[str] | None = None
) -> str | None:
    """A text field as sent (ints as their digits), None when absent or blank; ValueError
    naming `what` when it is longer than `max_chars` or does not match `pattern` whole."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | str):
        raise ValueError(f"{what} must be text, got {type(value).__name__}")
    if isinstance(value, int) and value.bit_length() > 4 * max_chars:  # 4 bits > a digit
        raise ValueError(f"{what} is longer than {max_chars} characters")
    text = str(value).strip()
    if not text:
        return None
    if len(text) > max_chars:
        raise ValueError(f"{what} is {len(text)} characters long (at most {max_chars})")
    if pattern is not None and pattern.fullmatch(text) is None:
        raise ValueError(f"{what} {text!r} holds characters an id does not")
    return text


def clipped(text: str | None, max_chars: int) -> str | None:
    """Free text cut to `max_chars` characters, the cut marked (`CLIP_MARKER`), storable."""
    if text is None:
        return None
    if len(text) <= max_chars:
        return storable(text)
    return storable(text[: max_chars - len(CLIP_MARKER)].rstrip() + CLIP_MARKER)


# Identifiers as Gamma and the CLOB send them: decimal token ids, numeric market ids, hex
# condition ids and hashes (tests and the simulated world use letters and `-` / `_` too).
WORD_ID = re.compile(r"[0-9A-Za-z_\-]+")
DIGITS = re.compile(r"[0-9]+")
PRINTABLE_ID = re.compile(r"[\x21-\x7e]+")  # printable ASCII, no space: safe in a URL path


def read_flag(value: object) -> bool | None:
    """A boolean from a bool or a "true"/"false" string; None (unknown) for anything else."""
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and len(value) <= 8 and value.strip().lower() in {"true", "false"}:
        return value.strip().lower() == "true"
    return None
