"""Text from outside (model answers, market payloads) made storable in any database, and
printable on a terminal."""

import re

REPLACEMENT = "\ufffd"


def storable(text: str) -> str:
    """`text` without what a database refuses: NUL characters (PostgreSQL) and lone UTF-16
    surrogates (not encodable as UTF-8). Each becomes U+FFFD, so nothing silently vanishes."""
    if "\x00" in text:
        text = text.replace("\x00", REPLACEMENT)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        text = text.encode("utf-8", "surrogatepass").decode("utf-8", "replace")
    return text


REPLICATE_LABEL = " · r"


def replicate_name(display_name: str, replicate: int, replicates: int) -> str:
    """An agent's display name: its family's, with its replicate when the family fields
    several agents in the cohort (charts and tables that list agents must tell them apart)."""
    return display_name if replicates <= 1 else f"{display_name}{REPLICATE_LABEL}{replicate}"


# What a terminal acts on instead of showing: C0 controls (ESC among them), DEL, C1 controls,
# Unicode bidi overrides/isolates/marks (text that reads in another order than it is stored),
# line/paragraph separators and lone surrogates (not printable at all).
_UNPRINTABLE = re.compile(
    "[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff]"
)
_SHORT = {"\t": "\\t", "\n": "\\n", "\r": "\\r"}


def _escape(match: re.Match[str]) -> str:
    char = match.group()
    if char in _SHORT:
        return _SHORT[char]
    code = ord(char)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def printable(text: str) -> str:
    """`text` safe to print on a terminal: every character a terminal would act on instead of
    showing (ESC, C0/C1, DEL, bidi overrides, line separators) as a visible escape such as
    `\\x1b` or `\\u202e`. Text from a file or the database cannot clear the screen, fake a
    line, or reorder what follows it."""
    return _UNPRINTABLE.sub(_escape, text)
