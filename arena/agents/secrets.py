"""Keeping the API key out of everything stored, in whatever form an endpoint echoes it back.

Proxies and misconfigured gateways echo the key: in error bodies, in `model` or `provider`,
even as the answer itself. What comes back is not always the key as sent: it can be upper- or
lower-cased, JSON-escaped (`\\u0073k-or-…`, `\\/`), URL-encoded (`%2F`, or every byte as
`%73%6B…`), HTML entities (`&#115;`, `&#x73;`), split by invisible characters, cut short
(`got 'SK-OR-V1-0a1b…'`), reversed, or re-encoded: hex, decimal bytes, base64, base32. So
`redact` looks for it in a *decoded view* of the text (escapes undone, invisible characters
dropped, fullwidth letters as ASCII, lower case) and replaces the original characters behind
each match, escapes and all. Each re-encoding is a fixed string derived from the key
(`arena.agents.key_forms`, which lists the forms and why), searched for in the same view, so
case, escapes and invisible splits compose with every form (base64 URL-encoded, hex upper-cased,
the key reversed then upper-cased). Redacted:

- every run of at least `PIECE` (12) characters of a given secret, case-insensitively (a
  secret shorter than that: the whole of it), and the like run of each of its forms: reversed,
  hex (`736b2d…`, `73:6B:2D`, `0x73, 0x6b`), decimal bytes (`[115, 107, 45, …]`), base64
  (standard and URL-safe, at each byte alignment, so inside the base64 of a longer string),
  base32; a secret shorter than `SHORT_SECRET` (a dummy local key such as "EMPTY") only where
  its exact text stands, so ordinary words survive;
- OpenRouter-shaped keys (`sk-or-` and 8+ key characters, any case), configured or not, also
  reversed, in hex and in base64 (their other forms need the key configured);
- bearer tokens (`Bearer …`, any case), unless `bearer=False`: the replay bundle copies free
  text (market questions: "the flag bearer at …") whose bytes must not change.

Text with nothing to redact is returned unchanged, byte for byte. `redact` and
`redact_value` are pure; the caller says which secrets it holds.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from arena.agents.key_forms import key_spans, lower, openrouter_encoded_spans

if TYPE_CHECKING:
    from arena.config import Settings

__all__ = ["PIECE", "REDACTED", "SHORT_SECRET", "configured_secrets", "redact", "redact_value"]

REDACTED = "[redacted]"
PIECE = 12  # a run of this many characters of a key is the key
SHORT_SECRET = 8  # shorter: a placeholder, not a key; only its exact text is redacted

# Looked for in the decoded, lower-cased view.
_BEARER = re.compile(r"\bbearer\s+([^\s\"',;]+)")
_OPENROUTER_KEY = re.compile(r"\bsk-or-[a-z0-9_-]{8,}")

# What an echo may be wrapped in, each decoded to one character (or none). Backslash runs of
# any length: a JSON string holding JSON doubles them.
_ENCODED = re.compile(
    r"\\+u(?P<u>[0-9a-fA-F]{4})"
    r"|\\+x(?P<x>[0-9a-fA-F]{2})"
    r"|\\+(?P<char>[/\\\"'])"
    r"|%(?P<pct>[0-7][0-9a-fA-F])"
    r"|&#(?P<dec>[0-9]{1,7});"
    r"|&#[xX](?P<hex>[0-9a-fA-F]{1,6});"
    r"|(?P<invisible>[\u00ad\u061c\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2064"
    "\u2066-\u206f\ufeff])"
    r"|(?P<wide>[\uff01-\uff5e])"
)
# The first character of any of them: one character class is scanned for far faster than the
# alternation, which is then only tried where such a character stands.
_TRIGGER = re.compile(
    "[\\\\%&\u00ad\u061c\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u206f"
    "\ufeff\uff01-\uff5e]"
)


@dataclass(frozen=True)
class _View:
    """The decoded, lower-cased text and where each of its pieces came from.

    Segment i covers view[starts[i]:] up to the next segment and text[spans[i][0]:spans[i][1]];
    a literal segment maps character for character, a decoded one is 0 or 1 view characters.
    """

    text: str
    starts: list[int]
    spans: list[tuple[int, int, bool]]

    def original(self, start: int, end: int) -> tuple[int, int]:
        """The span of the original text behind view[start:end] (end > start)."""
        return self._at(start)[0], self._at(end - 1)[1]

    def _at(self, index: int) -> tuple[int, int]:
        segment = bisect_right(self.starts, index) - 1
        begin, finish, literal = self.spans[segment]
        if not literal:
            return begin, finish
        offset = begin + index - self.starts[segment]
        return offset, offset + 1


def _decoded(match: re.Match[str]) -> str:
    """The character an escape stands for; "" for an invisible character."""
    group = match.lastgroup
    value = match.group(group or 0)
    if group == "invisible":
        return ""
    if group == "wide":
        return chr(ord(value) - 0xFEE0)
    if group == "char":
        return value
    code = int(value, 10 if group == "dec" else 16)
    return chr(code) if code <= 0x10FFFF else match.group(0)


def _view(text: str) -> _View:
    """`text` decoded and lower-cased, with the map back to its characters."""
    pieces: list[str] = []
    starts: list[int] = []
    spans: list[tuple[int, int, bool]] = []
    length = position = 0
    for match in _escapes(text):
        if match.start() > position:
            literal = lower(text[position : match.start()])
            pieces.append(literal)
            starts.append(length)
            spans.append((position, match.start(), True))
            length += len(literal)
        char = lower(_decoded(match))
        char = char if len(char) <= 1 else char[:1]
        pieces.append(char)
        starts.append(length)
        spans.append((match.start(), match.end(), False))
        length += len(char)
        position = match.end()
    if position < len(text) or not spans:
        pieces.append(lower(text[position:]))
        starts.append(length)
        spans.append((position, len(text), True))
    return _View("".join(pieces), starts, spans)


def _escapes(text: str) -> Iterable[re.Match[str]]:
    """Every escape of `_ENCODED` in `text`, in order, not overlapping."""
    position = 0
    for trigger in _TRIGGER.finditer(text):
        if trigger.start() < position:
            continue
        match = _ENCODED.match(text, trigger.start())
        if match is not None:
            position = match.end()
            yield match


def _merged(spans: Iterable[tuple[int, int]]) -> list[tuple[int, int]]:
    """Overlapping or touching spans joined, in order."""
    out: list[tuple[int, int]] = []
    for start, end in sorted(spans):
        if out and start <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], end))
        else:
            out.append((start, end))
    return out


def _matches(view: str, secrets: Sequence[str], bearer: bool) -> list[tuple[int, int]]:
    spans: list[tuple[int, int]] = []
    if "sk-or-" in view:  # a plain search first: the patterns are slower to scan with
        spans += [m.span() for m in _OPENROUTER_KEY.finditer(view)]
    if bearer and "bearer" in view:
        spans += [m.span(1) for m in _BEARER.finditer(view)]
    if secrets:
        spans += key_spans(view, secrets, PIECE)
    spans += openrouter_encoded_spans(view)
    return spans


def redact(text: str, secrets: Iterable[str] = (), *, bearer: bool = True) -> str:
    """`text` with every form of every secret, `sk-or-…` key and (unless `bearer=False`)
    bearer token replaced by `[redacted]`; unchanged when it holds none of them."""
    keys = [s for s in secrets if s and len(s) >= SHORT_SECRET]
    view = _view(text)
    spans = _merged(view.original(a, b) for a, b in _matches(view.text, keys, bearer) if b > a)
    if spans:
        parts, position = [], 0
        for start, end in spans:
            parts += [text[position:start], REDACTED]
            position = end
        parts.append(text[position:])
        text = "".join(parts)
    for secret in secrets:
        if secret and len(secret) < SHORT_SECRET and secret in text:
            text = text.replace(secret, REDACTED)
    return text


def redact_value(value: Any, secrets: Sequence[str] = (), *, bearer: bool = True) -> Any:
    """`value` with `redact` applied to every string in it (dict keys too, at any depth):
    what a JSON column or a row read from the database holds. Other values are kept."""
    if isinstance(value, str):
        return redact(value, secrets, bearer=bearer)
    if isinstance(value, dict):
        return {
            redact_value(k, secrets, bearer=bearer): redact_value(v, secrets, bearer=bearer)
            for k, v in value.items()
        }
    if isinstance(value, list | tuple):
        return type(value)(redact_value(v, secrets, bearer=bearer) for v in value)
    return value


def configured_secrets(settings: Settings | None = None) -> tuple[str, ...]:
    """The API key the settings hold (the loaded ones by default): what a command that reads
    the database, rather than calling a model, must keep out of what it writes."""
    if settings is None:
        from arena.config import get_settings

        settings = get_settings()
    key = settings.llm_api_key
    return (key.get_secret_value(),) if key is not None else ()
