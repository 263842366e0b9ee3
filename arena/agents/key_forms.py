"""The encoded forms of a key an echo may carry, and a search for them that stays linear.

`arena.agents.secrets` finds a key in a decoded, lower-cased view of a text (escapes undone,
invisible characters dropped). This module adds the key *re-encoded*, each form a fixed,
lower-cased string derived from the key's UTF-8 bytes, searched for in that same view; so every
form is found in any case, JSON-escaped, URL-encoded or split by invisible characters without
further work. A run of `width` characters of a form stands for `PIECE` characters of the key
(all of it when the key is shorter), as a run of `PIECE` characters of the key itself does:

- reversed (`strrev`, a string reversed by mistake), in any case;
- hex, two digits a byte, upper or lower case, with no separator or with one of `SEPARATORS`
  (`73:6b:2d`, `73 6b`, `0x73, 0x6b`); `\\x73` and `%73` escapes the view has already undone;
- decimal bytes joined by `,` or `, ` (a JSON or Python list of the key's bytes; Node's
  `{"type": "Buffer", "data": [115, 107, …]}`);
- base64, standard and URL-safe alphabets, padded or not, at each of the three byte
  alignments: the key inside the base64 of `prefix + key + suffix` is, for `len(prefix) % 3`
  = a, the base64 of `a` zero bytes + key with the characters that also carry prefix or
  suffix bits cut off (two or three at the start, up to two at the end);
- base32 (RFC 4648), likewise at each of its five alignments.

Escapes the view undoes compose with these for free: every byte percent-encoded (`%73%6B…`)
and numeric HTML character references (`&#115;`, `&#x73;`) are the key itself once decoded.

Not covered, as no echo has a reason to produce them or they are not the key's bytes: base85,
ROT13, the key re-encoded after being reversed or case-changed (base64 of its upper case),
UTF-16 hex, hex split across lines, named HTML references (`&sol;`: `html.escape` never writes
them), percent-encoded bytes above 0x7F (a key is ASCII).

Speed (it runs on every string stored). The forms, the key as sent among them, are read off the
text together in one pass: every run of `SHORTEST_BLOCKED` (11) or more characters of a form
covers one of the text's 8-character blocks starting at a multiple of 4, so those blocks, read
as 64-bit integers, are tested against the set of every 8-character piece of every form, in C,
a 4 KB chunk at a time; only a chunk with a block in the set is read block by block, and the
match is followed out from each such block (slice comparisons, a binary search). A form with a
non-ASCII character or shorter than 11 (a key under 11 characters) is searched for with
`str.find` of its chunks. Redacting a 1 MB text takes about 18 ms of CPU on the 2-core test
machine (`tests/security/test_key_forms.py` holds it under 50 ms).
"""

from __future__ import annotations

import base64
import re
import sys
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from functools import lru_cache
from itertools import chain

__all__ = ["SEPARATORS", "Form", "key_forms", "key_spans", "lower", "openrouter_encoded_spans"]

BLOCK = 8  # the text is read in blocks of this many characters (one 64-bit integer each),
STEP = 4  # starting at every multiple of this: a run of BLOCK + STEP - 1 covers one
SHORTEST_BLOCKED = BLOCK + STEP - 1
CHUNK = 4096  # the text is read this many characters at a time
SEPARATORS = ("", ":", "-", " ", ",", ", ", " 0x", ",0x", ", 0x")  # between hex byte pairs
DECIMAL_SEPARATORS = (",", ", ")  # between decimal bytes


@dataclass(frozen=True)
class Form:
    """A key encoded one way, lower case; `width` characters of it stand for the key."""

    name: str
    text: str
    width: int


def _bytewise(name: str, data: bytes, width: int, digits: Callable[[int], str], sep: str) -> Form:
    """Every byte written by `digits`, joined by `sep`; width: the shortest window of
    `width` bytes so written."""
    parts = [digits(b) for b in data]
    window = min(width, len(parts))
    shortest = min(
        sum(len(p) for p in parts[i : i + window]) + len(sep) * (window - 1)
        for i in range(len(parts) - window + 1)
    )
    return Form(name, sep.join(parts), shortest)


def _radix(name: str, data: bytes, width: int, alignment: int, bits: int) -> Form:
    """`data` in base64 (`bits` 6) or base32 (5) after `alignment` bytes of something else:
    only the characters all of whose bits are the key's."""
    group = 3 if bits == 6 else 5
    encode = base64.b64encode if bits == 6 else base64.b32encode
    encoded = encode(bytes(alignment) + data + bytes(group)).decode("ascii")
    start = -(-8 * alignment // bits)
    end = (8 * alignment + 8 * len(data)) // bits
    # The fewest whole characters any `width` bytes of the key give, at any alignment.
    shortest = min(
        (8 * a + 8 * min(width, len(data))) // bits - -(-8 * a // bits) for a in range(group)
    )
    return Form(name, encoded[start:end].lower(), shortest)


def lower(text: str) -> str:
    """Lower case without changing the length (a character whose lower case is longer stays):
    offsets into the lower-cased view are offsets into the text it was built from."""
    low = text.lower()
    if len(low) == len(text):
        return low
    return "".join(c.lower() if len(c.lower()) == 1 else c for c in text)


@lru_cache(maxsize=32)
def key_forms(secret: str, piece: int) -> tuple[Form, ...]:
    """The key as sent and every form of it this module finds (see the module docstring),
    lower case; `piece`: how many characters of the key are the key."""
    width = min(piece, len(secret))
    data = secret.encode("utf-8")
    forms = [Form("as sent", lower(secret), width), Form("reversed", lower(secret[::-1]), width)]
    forms += [_bytewise(f"hex{sep!r}", data, width, "{:02x}".format, sep) for sep in SEPARATORS]
    forms += [_bytewise(f"decimal{sep!r}", data, width, str, sep) for sep in DECIMAL_SEPARATORS]
    for alignment in range(3):
        form = _radix(f"base64@{alignment}", data, width, alignment, 6)
        safe = form.text.replace("+", "-").replace("/", "_")
        forms += [form] if safe == form.text else [form, Form(form.name + "url", safe, form.width)]
    forms += [_radix(f"base32@{a}", data, width, a, 5) for a in range(5)]
    unique = {(f.text, f.width): f for f in forms if f.text and f.width > 0}
    return tuple(unique.values())


@dataclass(frozen=True)
class _Index:
    """The forms of some secrets: those searched chunk by chunk, and every BLOCK-piece of the
    others, as the integer a text's block is read as, with where it stands in which form."""

    searched: tuple[Form, ...]
    blocked: tuple[Form, ...]
    pieces: dict[int, tuple[tuple[int, int], ...]]  # integer -> (form number, offset) pairs
    keys: frozenset[int]


def _as_int(piece: str) -> int:
    return int.from_bytes(piece.encode("ascii"), sys.byteorder)


@lru_cache(maxsize=32)
def _index(secrets: tuple[str, ...], piece: int) -> _Index:
    forms = [form for secret in secrets for form in key_forms(secret, piece)]
    # A form with a non-ASCII character, or too short to cover a block, is searched for.
    by_block = [f.width >= SHORTEST_BLOCKED and f.text.isascii() for f in forms]
    searched = tuple(f for f, blocked in zip(forms, by_block, strict=True) if not blocked)
    blocked = tuple(f for f, blocked in zip(forms, by_block, strict=True) if blocked)
    pieces: dict[int, list[tuple[int, int]]] = {}
    for number, form in enumerate(blocked):
        for offset in range(len(form.text) - BLOCK + 1):
            pieces.setdefault(_as_int(form.text[offset : offset + BLOCK]), []).append(
                (number, offset)
            )
    frozen = {k: tuple(v) for k, v in pieces.items()}
    return _Index(searched, blocked, frozen, frozenset(frozen))


def _occurrences(haystack: str | bytes, needle: str | bytes) -> Iterable[int]:
    """Every start of `needle` in `haystack`, overlapping ones included."""
    index = haystack.find(needle)  # type: ignore[arg-type]
    while index >= 0:
        yield index
        index = haystack.find(needle, index + 1)  # type: ignore[arg-type]


def search_runs(view: str, needle: str, width: int) -> list[tuple[int, int]]:
    """Spans of `view` made of `width`-character runs of `needle`.

    Every such run contains one of the needle's aligned width/2-chunks, so only the few places
    where a chunk occurs are checked: linear in the text, whatever it holds.
    """
    if width >= len(needle):
        return [(i, i + len(needle)) for i in _occurrences(view, needle)]
    chunk = max(1, width // 2)
    runs = {needle[i : i + width] for i in range(len(needle) - width + 1)}
    chunks = {needle[i : i + chunk] for i in range(0, len(needle) - chunk + 1, chunk)}
    found: set[int] = set()
    for piece in chunks:
        for at in _occurrences(view, piece):
            for start in range(max(0, at - width + chunk), at + 1):
                if view[start : start + width] in runs:
                    found.add(start)
    return [(start, start + width) for start in found]


def _shared_start(a: str, a_at: int, b: str, b_at: int, limit: int) -> int:
    """How many characters a[a_at:] and b[b_at:] have in common from the start (at most
    `limit`): a binary search of slice comparisons, each done in C."""
    low, high = 0, limit
    while low < high:
        middle = (low + high + 1) // 2
        if a[a_at : a_at + middle] == b[b_at : b_at + middle]:
            low = middle
        else:
            high = middle - 1
    return low


def _shared_end(a: str, a_at: int, b: str, b_at: int, limit: int) -> int:
    """How many characters a[:a_at] and b[:b_at] have in common at their ends (at most
    `limit`)."""
    low, high = 0, limit
    while low < high:
        middle = (low + high + 1) // 2
        if a[a_at - middle : a_at] == b[b_at - middle : b_at]:
            low = middle
        else:
            high = middle - 1
    return low


def _hits(data: bytes, keys: frozenset[int]) -> Iterator[tuple[int, int]]:
    """(offset, integer) of every block of `data` at a multiple of STEP that is in `keys`, in
    order. Read a CHUNK at a time in C; only a chunk holding one is read block by block."""
    view = memoryview(data)
    stop = len(data) - BLOCK + 1  # blocks start before this
    for chunk in range(0, stop, CHUNK):
        end = min(chunk + CHUNK, stop)
        columns = []
        for start in range(chunk, min(chunk + BLOCK, end), STEP):
            count = (end - start + BLOCK - 1) // BLOCK
            columns.append((start, view[start : start + count * BLOCK].cast("Q")))
        if keys.isdisjoint(chain.from_iterable(column for _, column in columns)):
            continue
        found = [
            (start + BLOCK * i, value)
            for start, column in columns
            for i, value in enumerate(column)
            if value in keys
        ]
        yield from sorted(found)


def key_spans(view: str, secrets: Sequence[str], piece: int) -> list[tuple[int, int]]:
    """Spans of the lower-cased `view` holding a run of any form of any secret."""
    index = _index(tuple(secrets), piece)
    spans: list[tuple[int, int]] = []
    for form in index.searched:
        spans += search_runs(view, form.text, form.width)
    if not index.keys or len(view) < SHORTEST_BLOCKED:
        return spans
    data = view.encode("ascii", "replace")  # one byte a character: offsets stay the view's
    covered = 0  # a block ending before this lies in a run found already
    for at, value in _hits(data, index.keys):
        for number, offset in index.pieces[value]:
            if at + BLOCK <= covered:
                break  # the block is in a run found: what else runs through it is found later
            form = index.blocked[number]
            room = min(len(form.text) - offset, len(view) - at) - BLOCK
            after = _shared_start(view, at + BLOCK, form.text, offset + BLOCK, room)
            before = _shared_end(view, at, form.text, offset, min(offset, at))
            if before + BLOCK + after >= form.width:
                spans.append((at - before, at + BLOCK + after))
                covered = max(covered, at + BLOCK + after)
    return spans


# An OpenRouter key nobody configured (a bundle built without the key at hand): `sk-or-` and 8+
# key characters, reversed, in hex or in base64 at each alignment. Its other forms need the key.
_KEY_CHARS = frozenset("abcdefghijklmnopqrstuvwxyz0123456789_-")
_HEX_PREFIXES = tuple(sep.join(("73", "6b", "2d", "6f", "72", "2d")) for sep in ("", ":", " "))
_LONGEST = 256  # key characters taken after the prefix: bounded, so each match is short
_HEX_KEY = re.compile(
    r"73(?P<s>[: ]?)6b(?P=s)2d(?P=s)6f(?P=s)72(?P=s)2d(?:(?P=s)[0-9a-f]{2}){8,"
    + str(_LONGEST)
    + "}"
)
_BASE64_PREFIXES = ("c2stb3it", "nrlw9yl", "zay1vci")  # "sk-or-" at alignments 0, 1, 2
_BASE64_KEY = re.compile(
    r"(?:c2stb3it|nrlw9yl|zay1vci)[a-z0-9+/_-]{10," + str(_LONGEST * 4 // 3) + "}"
)


def openrouter_encoded_spans(view: str) -> list[tuple[int, int]]:
    """Spans of the lower-cased `view` holding an `sk-or-` key reversed, in hex or base64."""
    spans: list[tuple[int, int]] = []
    for at in _occurrences(view, "-ro-ks"):
        end = at + 6
        if end < len(view) and view[end] in _KEY_CHARS and view[end] != "-":
            continue  # inside a longer word ("…-ro-ksat"), as `\bsk-or-` wants
        start = at
        while start > max(0, at - _LONGEST) and view[start - 1] in _KEY_CHARS:
            start -= 1
        if at - start >= 8:
            spans.append((start, end))
    for prefixes, pattern in ((_HEX_PREFIXES, _HEX_KEY), (_BASE64_PREFIXES, _BASE64_KEY)):
        for prefix in prefixes:
            for at in _occurrences(view, prefix):
                match = pattern.match(view, at)
                if match is not None:
                    spans.append(match.span())
    return spans
