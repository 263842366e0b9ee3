"""The key's forms an echoing endpoint may send, and the search for any piece of it.

`forms(key)` is the key as an endpoint may echo it: in any case, JSON- or URL-escaped, split by
invisible characters, and re-encoded (`encoded_forms`: reversed, hex, decimal bytes, base64,
base32, HTML character references). `found` searches a text for the key independently of
`arena.agents.secrets`: in decoded views of it (JSON escapes, percent escapes and HTML
character references undone, lower case), for every 12-character piece of the key, reversed
too, and for every 12-byte piece re-encoded each way the contract names; a re-encoded piece's
base64 and base32 characters are those that do not change with the bytes around it.
"""

import base64
import functools
import html
import json
import re
import secrets
import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from urllib.parse import quote, unquote

import pytest

PIECE = 12  # no run of this many characters of the key may survive anywhere
ZWSP = "\u200b"


# ------------------------------------------------------------------ the keys and their forms


@dataclass(frozen=True)
class Key:
    """A fake key, the environment variable it is set in, and its random part."""

    value: str
    env: str
    random_part: str

    def pieces(self) -> set[str]:
        """Every PIECE-character run of the key (lower case), reversed too, and its random
        part."""
        low = self.value.lower()
        runs = {low[i : i + PIECE] for i in range(len(low) - PIECE + 1)}
        return runs | {run[::-1] for run in runs} | {self.random_part.lower()}


@functools.cache
def encoded_pieces(key: Key) -> frozenset[str]:
    """Every PIECE-byte run of the key as each re-encoding the contract names writes it (lower
    case): hex with its separators, decimal bytes, base64 (both alphabets) and base32 at every
    alignment."""
    data = key.value.encode()
    out: set[str] = set()
    for piece in (data[i : i + PIECE] for i in range(len(data) - PIECE + 1)):
        out |= {sep.join(f"{b:02x}" for b in piece) for sep in HEX_SEPARATORS}
        out |= {sep.join(str(b) for b in piece) for sep in (",", ", ")}
        for encode, group in ((base64.b64encode, 3), (base64.urlsafe_b64encode, 3)):
            out |= {own_characters(encode, group, a, piece) for a in range(group)}
        out |= {own_characters(base64.b32encode, 5, a, piece) for a in range(5)}
    encoded = frozenset(e.lower() for e in out)
    assert min(map(len, encoded)) >= 15  # what `may_hold` relies on
    return encoded


@functools.cache
def eight_grams(encoded: frozenset[str]) -> frozenset[int]:
    """Every 8-character piece of every string in `encoded`, read as `may_hold` reads a text."""
    return frozenset(
        int.from_bytes(e[i : i + 8].encode(), sys.byteorder)
        for e in encoded
        for i in range(len(e) - 7)
    )


HEX_SEPARATORS = ("", ":", "-", " ", ",", ", ", " 0x", ",0x", ", 0x")


def own_characters(
    encode: Callable[[bytes], bytes], group: int, alignment: int, piece: bytes
) -> str:
    """The characters of `piece` encoded after `alignment` other bytes that depend on the piece
    alone: those two encodings, with zero bytes and with 0xff bytes around it, agree on."""
    after = -(alignment + len(piece)) % group + group  # whole groups: no `=` to agree on
    zeros = encode(bytes(alignment) + piece + bytes(after)).decode()
    ones = encode(b"\xff" * alignment + piece + b"\xff" * after).decode()
    same = [i for i, (a, b) in enumerate(zip(zeros, ones, strict=True)) if a == b]
    return zeros[same[0] : same[-1] + 1]


def openrouter_key() -> Key:
    random_part = secrets.token_hex(32)
    return Key(f"sk-or-v1-{random_part}", "OPENROUTER_API_KEY", random_part)


def plain_key() -> Key:
    """Not OpenRouter-shaped; holds `/` and `+` so its JSON and URL escapes differ from it."""
    random_part = f"{secrets.token_hex(10)}/{secrets.token_hex(8)}+{secrets.token_hex(6)}"
    return Key(f"gw-{random_part}", "ARENA_LLM_API_KEY", random_part)


KEYS = [pytest.param(openrouter_key, id="sk-or-v1"), pytest.param(plain_key, id="plain")]
# One key of each kind for the tests of `redact` alone: the search for its re-encoded pieces
# is built once, not per example.
SAMPLE = {make: make() for make in (openrouter_key, plain_key)}


def u_escaped(text: str) -> str:
    """Every character as a JSON `\\uXXXX` escape."""
    return "".join(f"\\u{ord(c):04x}" for c in text)


def json_escaped(text: str) -> str:
    """The first character `\\u`-escaped and every `/` as `\\/`, as some encoders write it."""
    return u_escaped(text[0]) + text[1:].replace("/", "\\/")


def split_invisibly(text: str) -> str:
    """A zero-width space every 5 characters (the parser removes them before reading)."""
    return ZWSP.join(text[i : i + 5] for i in range(0, len(text), 5))


def forms(key: str) -> dict[str, str]:
    """The key as an echoing endpoint may send it."""
    return {
        "as is": key,
        "upper": key.upper(),
        "lower": key.lower(),
        "swapped": key.swapcase(),
        "u-escaped": u_escaped(key),
        "json-escaped": json_escaped(key),
        "url-encoded": quote(key, safe=""),
        "url-encoded upper": quote(key.upper(), safe=""),
        "invisibly split": split_invisibly(key),
        **encoded_forms(key),
    }


def encoded_forms(key: str) -> dict[str, str]:
    """The key re-encoded, as an echoing endpoint may send it."""
    data = key.encode()
    b64 = base64.b64encode(data).decode()
    return {
        "reversed": key[::-1],
        "reversed upper": key[::-1].upper(),
        "reversed url-encoded": quote(key[::-1].upper(), safe=""),
        "every byte %-encoded": "".join(f"%{b:02X}" for b in data),
        "html entities": "".join(f"&#{b};" if i % 2 else f"&#x{b:x};" for i, b in enumerate(data)),
        "hex": data.hex(),
        "hex upper": data.hex().upper(),
        "hex colons": data.hex(":").upper(),
        "hex 0x list": ", ".join(f"0x{b:02x}" for b in data),
        "byte list": json.dumps(list(data)),
        "node buffer": json.dumps({"type": "Buffer", "data": list(data)}, separators=(",", ":")),
        "base64": b64,
        "base64 upper": b64.upper(),
        "base64 url-safe unpadded": base64.urlsafe_b64encode(data).decode().rstrip("="),
        "basic auth": base64.b64encode(b"user:" + data).decode(),  # the key at alignment 2
        "base64 of a header": base64.b64encode(b"Authorization: Bearer " + data).decode(),
        "base64 url-encoded": quote(base64.b64encode(b"?" + data + b"?").decode(), safe=""),
        "base64 invisibly split": split_invisibly(b64),
        "base32": base64.b32encode(b"abc" + data).decode(),
    }


ENCODED = list(encoded_forms("x" * 20))
# What the `sk-or-…` pattern finds with no key configured (its other forms need the key).
WITHOUT_THE_KEY = [
    f for f in forms("x" * 20) if f not in ("hex 0x list", "byte list", "node buffer", "base32")
]


# ------------------------------------------------------------------ searching for it


_U_ESCAPE = re.compile(r"\\+u([0-9a-fA-F]{4})")
_CHAR_ESCAPE = re.compile(r"\\+([/\\\"'])")


def decoded_views(text: str) -> list[str]:
    """`text` lower-cased, with JSON escapes undone, percent escapes undone, both, and HTML
    character references undone."""
    plain = text.replace(ZWSP, "")
    unjson = _CHAR_ESCAPE.sub(
        lambda m: m.group(1), _U_ESCAPE.sub(lambda m: chr(int(m.group(1), 16)), plain)
    )
    views = (plain, unjson, unquote(plain), unquote(unjson), html.unescape(plain))
    return [v.lower() for v in views]


def found(key: Key, text: str) -> str | None:
    """The first piece of the key, as is, reversed or re-encoded, found in any view of
    `text`, or None."""
    views = decoded_views(text)
    encoded = encoded_pieces(key)
    for view in views:
        candidates = sorted(key.pieces()) + (sorted(encoded) if may_hold(encoded, view) else [])
        for piece in candidates:
            if piece in view:
                index = view.find(piece)
                return f"{piece!r} in …{view[max(0, index - 60) : index + 60]}…"
    return None


def may_hold(encoded: frozenset[str], view: str) -> bool:
    """False only when `view` holds none of `encoded` (all 15+ characters): then none of the
    view's 8-character blocks at multiples of 8 is a piece of one of them. Searching the
    megabytes a run stores for hundreds of strings one by one would take minutes."""
    grams = eight_grams(encoded)
    data = view.encode("ascii", "replace")
    blocks = memoryview(data)[: len(data) // 8 * 8].cast("Q")
    return not grams.isdisjoint(blocks)


def leaks(key: Key, texts: Iterable[tuple[str, str]]) -> list[str]:
    return [f"{where}: {hit}" for where, text in texts if (hit := found(key, text))]
