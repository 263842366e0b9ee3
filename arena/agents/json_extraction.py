"""Finding a decision's JSON object in a model's free text (methodology v1 §8), before any
validation: what `arena.agents.parsing.parse_decision` validates is what this module found.

Tolerance rules (see the README's methodology notes), each chosen so that an answer whose
intent is unambiguous is used rather than retried:

- **Thinking blocks** (`<think>…</think>`, `<thinking>…</thinking>`, any case, whitespace
  inside the tag allowed), which open-weight reasoning models put before their answer, are set
  aside first (`split_thinking`): the answer outside them is searched, so a draft inside the
  thinking never wins over the final answer. An unclosed opening tag (a truncated response)
  makes the rest thinking; a closing tag with no opening tag before it (servers that strip the
  opening one) makes everything before it thinking. Only when the answer has no object with an
  action and does not even try to write one (no `"action":` key) is the first one inside the
  thinking used, noted in `notes` (`FROM_THINKING_NOTE`); an answer that tries and fails gets
  its own error and a retry, never the draft. A tag inside the JSON's own text is handled by a
  last pass over the whole answer, also noted. The stored raw response keeps everything.
- **Finding the JSON.** The first JSON object, in reading order, that has an `"action"` key is
  the answer. Code fences, prose before or after, wrapping quotes, a wrapper object such as
  `{"decision": {...}}` and a JSON *string* that itself contains the object (up to two levels
  of encoding) are all accepted; an outer object with an action wins over one nested inside
  it, and an example quoted inside an answer's reasoning is never mistaken for the answer.
  Literal newlines inside strings are accepted (JSON's strict mode is off). Duplicate keys:
  the last one wins. A trailing comma before `}` or `]` is tolerated (removed outside
  strings, only when nothing parses without the repair). Python literals (`True`, `None`,
  single quotes) are not JSON and are rejected with a hint.
- **Invisible characters** (zero-width, bidi marks, BOM, tag characters) are removed from the
  whole answer before parsing; they never carry meaning in an answer and hide tricks. Other
  look-alikes are not mapped: fullwidth braces are not JSON, a Cyrillic `ВЕТ` is not `BET`.
- **Limits.** More than 200,000 characters is malformed without being scanned. The scan tries
  only `{"` positions, decodes through an 8 KB window first and has a work budget, so no
  answer can make parsing slow (tens of milliseconds at worst). NaN, Infinity and integers of
  more than 4,300 digits are rejected (numbers are decoded as exact Decimals, never floats).
"""

import json
import re
from decimal import Decimal
from typing import Any

__all__ = [
    "ACROSS_TAG_NOTE",
    "FROM_THINKING_NOTE",
    "INVISIBLE",
    "MAX_RAW_CHARS",
    "MalformedResponse",
    "extract_answer",
    "extract_json",
    "split_thinking",
]

MAX_RAW_CHARS = 200_000

_SCAN_ATTEMPTS = 5_000  # decode attempts per answer
_SCAN_WORK = 1_000_000  # characters examined per answer, counted conservatively
_WINDOW = 8_192  # characters decoded before trying the rest of the text
_STRING_DEPTH = 2  # a JSON string holding JSON holding a JSON string …

INVISIBLE = re.compile(
    "[\u00ad\u061c\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u206f\ufeff"
    "\ufff9-\ufffb\U000e0000-\U000e007f]"
)
_OBJECT_START = re.compile(r'\{\s*"')  # an object that can hold a key; `{}` and `{prose}` cannot
# `<think>`, `</thinking >`, `< /THINK>`: bounded whitespace, so no input makes it backtrack.
_THINK_TAG = re.compile(r"<\s{0,16}(/\s{0,16})?think(?:ing)?\s{0,16}>", re.IGNORECASE)
# The answer outside the thinking tries to give an action (`"action":`, `\"action\":`, `'action':`).
_ACTION_KEY = re.compile(r"""["']action\\*["']\s*:""")

FROM_THINKING_NOTE = "decision read from inside the model's thinking: no answer outside it"
ACROSS_TAG_NOTE = "a thinking tag inside the answer's JSON was read as plain text"


class MalformedResponse(ValueError):
    """The answer cannot be read as a decision; the message is fit to show the model."""


class _NotFound(MalformedResponse):
    """The text holds no JSON object with an action (as opposed to a bad one or a spent budget)."""


class _NonFinite(ValueError):
    """NaN or Infinity met while decoding."""


def _reject_constant(name: str) -> Any:
    raise _NonFinite(name)


_DECODER = json.JSONDecoder(parse_float=Decimal, parse_constant=_reject_constant, strict=False)


def _first_with_action(value: Any) -> dict[str, Any] | None:
    """The first dict (pre-order, document order) that has an "action" key."""
    stack: list[Any] = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            if "action" in item:
                return item
            stack.extend(reversed(list(item.values())))
        elif isinstance(item, list):
            stack.extend(reversed(item))
    return None


class _Budget:
    """Work allowed for one answer, shared by every pass, so no input can make parsing slow."""

    def __init__(self) -> None:
        self.attempts = 0
        self.work = 0

    def spend(self, characters: int) -> None:
        self.attempts += 1
        self.work += max(characters, 1)
        if self.attempts > _SCAN_ATTEMPTS or self.work > _SCAN_WORK:
            raise MalformedResponse("no usable JSON object found (too much non-JSON text)")


def _decode_at(text: str, start: int, budget: _Budget) -> tuple[Any, int] | None:
    """`raw_decode` at `start`, or None where no JSON value starts there.

    Why a window: a failed decode builds a JSONDecodeError whose line/column count costs
    O(position), so decoding the whole text from every candidate would be quadratic. The
    value is decoded from an 8 KB window first; only a failure the window itself may have
    caused (at its end, or an unterminated string) is retried on the rest of the text, and
    that costly retry is charged in full to the budget.
    """
    ends = (start + _WINDOW, len(text)) if start + _WINDOW < len(text) else (len(text),)
    for chunk_end in ends:
        chunk = text[start:chunk_end]
        try:
            value, end = _DECODER.raw_decode(chunk)
        except json.JSONDecodeError as exc:
            budget.spend(exc.pos + 64 if chunk_end - start <= _WINDOW else len(chunk))
            near_end = exc.pos >= len(chunk) - 8 or exc.msg.startswith("Unterminated string")
            if near_end and chunk_end < len(text):
                continue
            return None
        except _NonFinite as exc:
            raise MalformedResponse(
                f"{exc} is not a valid JSON number; write amounts as plain numbers"
            ) from None
        except ValueError:  # Python refuses integers of more than 4,300 digits
            raise MalformedResponse("a number in the answer has too many digits") from None
        except RecursionError:  # nesting deeper than any answer needs
            budget.spend(len(chunk))
            return None
        budget.spend(end)
        return value, start + end
    return None


def _scan_objects(text: str, budget: _Budget) -> dict[str, Any] | None:
    """Decode from each `{"` in order; the first decoded value holding an action wins.

    A successful decode skips past its object (its insides were searched already); a failed
    one moves on by one character, so an object is found even after broken brace-y prose.
    Braces not followed by a key (`{}`, `{maybe}`) are never tried: they cannot hold one.
    """
    position = 0
    while match := _OBJECT_START.search(text, position):
        decoded = _decode_at(text, match.start(), budget)
        if decoded is None:
            position = match.start() + 1
            continue
        value, position = decoded
        found = _first_with_action(value)
        if found is not None:
            return found
    return None


def _scan_strings(text: str, depth: int, budget: _Budget) -> dict[str, Any] | None:
    """A JSON string whose content is an answer: `"{\\"action\\": \\"HOLD\\"}"`."""
    for match in re.finditer(r'"(?:\s|\\+")*\{', text):  # a string opening with `{` or `\"{`
        decoded = _decode_at(text, match.start(), budget)
        if decoded is None:
            continue
        value, _ = decoded
        if isinstance(value, str) and "action" in value:
            try:
                return _find(value, depth + 1, budget)
            except MalformedResponse:
                continue
    return None


def _strip_trailing_commas(text: str) -> str:
    """Remove commas directly before `}` or `]`, outside JSON strings only (linear time)."""
    out: list[str] = []
    in_string = escaped = False
    for char in text:
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char in "}]":
            index = len(out) - 1
            while index >= 0 and out[index].isspace():
                index -= 1
            if index >= 0 and out[index] == ",":
                del out[index]
        out.append(char)
    return "".join(out)


def _find(text: str, depth: int, budget: _Budget) -> dict[str, Any]:
    if depth <= _STRING_DEPTH:
        found = _scan_objects(text, budget)
        if found is None:
            found = _scan_strings(text, depth, budget)
        if found is None and "," in text:
            repaired = _strip_trailing_commas(text)
            if repaired != text:
                found = _scan_objects(repaired, budget)
        if found is not None:
            return found
    hint = ""
    if re.search(r"'action'\s*:", text):
        hint = " (JSON needs double quotes around keys and strings)"
    raise _NotFound(f'no JSON object with an "action" key was found{hint}')


def _split(text: str) -> tuple[str, str] | None:
    """(thinking, answer) of `text`, or None when it has no thinking tag at all (linear time).

    Blocks are not nested: inside a block an opening tag is text and the first closing tag
    ends it. An unclosed block runs to the end. A closing tag before any opening tag makes
    everything before it thinking (only the first such tag: later stray ones are text).
    """
    thinking: list[str] = []
    answer: list[str] = []
    inside = opened = False
    start = 0
    for tag in _THINK_TAG.finditer(text):
        closing = tag.group(1) is not None
        if inside:
            if closing:
                thinking.append(text[start : tag.start()])
                inside, start = False, tag.end()
        elif not closing:
            answer.append(text[start : tag.start()])
            inside = opened = True
            start = tag.end()
        elif not opened:  # the server stripped the opening tag
            thinking.append(text[start : tag.start()])
            opened, start = True, tag.end()
    if not opened:
        return None
    (thinking if inside else answer).append(text[start:])
    return _join(thinking), _join(answer)


def _join(parts: list[str]) -> str:
    return "\n\n".join(part.strip() for part in parts if part.strip())


def split_thinking(raw: str) -> tuple[str, str]:
    """(thinking, answer): the text of every `<think>`/`<thinking>` block, and the rest.

    Without a thinking tag the result is `("", raw)`, unchanged. See the module docstring for
    unclosed blocks and a lone closing tag.
    """
    parts = _split(raw)
    return ("", raw) if parts is None else parts


def extract_answer(raw: str) -> tuple[dict[str, Any], str | None]:
    """The answer's JSON object and a note saying where it came from when not the plain answer.

    One budget covers every pass: the answer outside the thinking, then (only if the answer
    does not try to give an action) the thinking, then the whole text (a tag inside a JSON
    string). Any error other than "not found" ends the search, as it always has.
    """
    text = _answer_text(raw)
    budget = _Budget()
    parts = _split(text)
    if parts is None:
        return _find(text, 0, budget), None
    thinking, answer = parts
    return _extract_around_thinking(text, thinking, answer, budget)


def _answer_text(raw: str) -> str:
    """`raw` without invisible characters and surrounding space; refused when not text, too
    long (before any scan) or empty."""
    if not isinstance(raw, str):
        raise MalformedResponse("the response is not text")
    if len(raw) > MAX_RAW_CHARS:
        raise MalformedResponse(
            f"the response is too long ({len(raw):,} characters; at most {MAX_RAW_CHARS:,})"
        )
    text = INVISIBLE.sub("", raw).strip()
    if not text:
        raise MalformedResponse("the response is empty")
    return text


def _extract_around_thinking(
    text: str, thinking: str, answer: str, budget: _Budget
) -> tuple[dict[str, Any], str | None]:
    """The passes of a text with thinking tags: the answer, the thinking, the whole text."""
    try:
        return _find(answer, 0, budget), None
    except _NotFound as exc:
        answer_error = exc
    attempted = _ACTION_KEY.search(answer) is not None
    if thinking:
        try:
            found = _find(thinking, 0, budget)
        except _NotFound:
            pass
        else:
            if attempted:  # the final answer's own error, never the draft
                raise answer_error
            return found, FROM_THINKING_NOTE
    try:
        return _find(text, 0, budget), ACROSS_TAG_NOTE
    except _NotFound:
        if attempted:
            raise answer_error from None
        raise


def extract_json(raw: str) -> dict[str, Any]:
    """The answer's JSON object, found tolerantly in free text; MalformedResponse if none."""
    return extract_answer(raw)[0]
