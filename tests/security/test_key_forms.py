"""The key re-encoded is redacted wherever it stands, clean text is kept, and it stays fast.

`redact` alone (pure, no database): the key inside the base64 or base32 of a longer string at
every alignment, in hex with any separator and case, reversed; keys too short for the block
search and keys with non-ASCII characters; an `sk-or-` key nobody configured; long encoded
text that does not hold the key left byte for byte; and 1 MB texts redacted well under 50 ms.
"""

import base64
import json
import random
import time
from collections.abc import Callable
from functools import partial

from hypothesis import given, settings
from hypothesis import strategies as st

from arena.agents.secrets import REDACTED, redact
from tests.examples import examples
from tests.security.echoes import SAMPLE, Key, found, openrouter_key, plain_key

KEYS = list(SAMPLE.values())
ENCODERS: dict[str, Callable[[bytes], bytes]] = {
    "base64": base64.b64encode,
    "base64 url-safe": base64.urlsafe_b64encode,
    "base32": base64.b32encode,
    "hex": lambda data: data.hex().encode(),
}


def assert_clean(key: Key, text: str) -> None:
    hit = found(key, text)
    assert hit is None, hit


@settings(max_examples=examples(200), deadline=None)
@given(
    before=st.binary(max_size=12),
    after=st.binary(max_size=12),
    encoder=st.sampled_from(sorted(ENCODERS)),
    case=st.sampled_from(["as is", "upper", "lower"]),
    padded=st.booleans(),
    plain=st.booleans(),
    around=st.text(max_size=20),
)
def test_the_key_inside_a_longer_encoded_string_is_redacted(
    before: bytes,
    after: bytes,
    encoder: str,
    case: str,
    padded: bool,
    plain: bool,
    around: str,
) -> None:
    """`prefix + key + suffix` encoded, at every alignment the prefix gives the key: only the
    characters that carry the prefix or the suffix may stay."""
    key = SAMPLE[plain_key if plain else openrouter_key]
    encoded = ENCODERS[encoder](before + key.value.encode() + after).decode()
    encoded = encoded if padded else encoded.rstrip("=")
    encoded = {"as is": encoded, "upper": encoded.upper(), "lower": encoded.lower()}[case]
    redacted = redact(around + encoded + around, [key.value])
    assert_clean(key, redacted)
    assert REDACTED in redacted
    assert redact(redacted, [key.value]) == redacted  # idempotent


@settings(max_examples=examples(100), deadline=None)
@given(data=st.binary(min_size=20, max_size=400), encoder=st.sampled_from(sorted(ENCODERS)))
def test_encoded_text_without_the_key_is_kept(data: bytes, encoder: str) -> None:
    text = ENCODERS[encoder](data).decode()
    for key in KEYS:
        assert redact(text, [key.value]) == text


def test_hex_with_separators_and_the_key_reversed_are_redacted() -> None:
    for key in KEYS:
        data = key.value.encode()
        for text in (
            data.hex(":"),
            data.hex("-").upper(),
            data.hex(" "),
            ",".join(f"0x{b:02X}" for b in data),
            json.dumps({"type": "Buffer", "data": list(data)}),
            key.value[::-1].swapcase(),
        ):
            redacted = redact(f"echo {text}!", [key.value])
            assert_clean(key, redacted)
            assert redacted.startswith("echo ") and redacted.endswith("!"), redacted


def test_a_short_key_is_found_whole_in_every_form() -> None:
    """Under 11 characters a form is searched for, not read off blocks: still found."""
    key = "gw-k3y9z"  # 8 characters: the shortest redacted as a key
    data = key.encode()
    for text in (
        base64.b64encode(data).decode(),
        base64.b64encode(b"u:" + data).decode(),
        data.hex(),
        data.hex(":"),
        key[::-1].upper(),
        base64.b32encode(data).decode(),
    ):
        redacted = redact(f"[{text}]", [key])
        assert key not in redacted.lower() and REDACTED in redacted, (text, redacted)
    assert redact("a gw-k3y or k3y9z", [key]) == "a gw-k3y or k3y9z"  # parts: not the key


def test_a_key_with_non_ascii_characters() -> None:
    """Its reversed form holds non-ASCII characters: searched for, not read off blocks."""
    key = Key("clé-secrète-0a1b2c3d4e5f", "ARENA_LLM_API_KEY", "0a1b2c3d4e5f")
    data = key.value.encode()
    for text in (key.value.upper(), key.value[::-1], data.hex(), base64.b64encode(data).decode()):
        redacted = redact(f"x {text} y", [key.value])
        assert_clean(key, redacted)
        assert redacted.startswith(f"x {REDACTED}"), redacted


def test_an_unconfigured_openrouter_key_reversed_in_hex_and_base64() -> None:
    key = openrouter_key()
    data = key.value.encode()
    for text in (
        key.value[::-1],
        key.value[::-1].upper(),
        data.hex(),
        data.hex(":").upper(),
        base64.b64encode(data).decode(),
        base64.b64encode(b"x" + data).decode(),
        base64.urlsafe_b64encode(b"xy" + data).decode().rstrip("="),
    ):
        assert_clean(key, redact(f"echo {text} done"))
    for kept in ("hgfedcba-ro-ksat", "736b2d6f722d", "c2stb3It"):  # a word; prefixes alone
        assert redact(kept) == kept


def megabyte_texts() -> dict[str, str]:
    rng = random.Random(7)
    words = [
        "".join(rng.choices("abcdefghijklmnopqrstuvwxyz", k=rng.randint(2, 9))) for _ in range(3000)
    ]
    prose = " ".join(rng.choices(words, k=200_000))[:1_000_000]
    markets = json.dumps(
        [
            {
                "id": str(i),
                "question": " ".join(rng.choices(words, k=12)),
                "token": str(rng.getrandbits(250)),
            }
            for i in range(6000)
        ]
    )[:1_000_000]
    blob = base64.b64encode(rng.randbytes(750_000)).decode()
    return {"prose": prose, "markets": markets, "base64": blob, "hex": rng.randbytes(500_000).hex()}


def cpu_ms(function: Callable[[], object], repeat: int = 3) -> float:
    """The fewest CPU milliseconds `function` took (CPU time: other processes on the machine
    do not count)."""
    best = float("inf")
    for _ in range(repeat):
        start = time.process_time()
        function()
        best = min(best, time.process_time() - start)
    return best * 1000


def test_a_megabyte_is_redacted_well_under_50_ms() -> None:
    key = SAMPLE[openrouter_key]
    for name, text in megabyte_texts().items():
        assert redact(text, [key.value]) == text  # nothing of the key in it: kept
        took = cpu_ms(partial(redact, text, [key.value]))
        assert took < 50, f"{name}: {took:.0f} ms"


def test_a_megabyte_of_echoes_stays_linear() -> None:
    """Thousands of echoes in every form: each found once, no rescanning per echo."""
    key = SAMPLE[plain_key]
    data = key.value.encode()
    echo = f" {base64.b64encode(b'u:' + data).decode()} {data.hex(':')} {key.value[::-1]} "
    text = echo * (1_000_000 // len(echo))
    took = cpu_ms(lambda: redact(text, [key.value]), repeat=1)
    assert took < 1000, f"{took:.0f} ms"
    assert_clean(key, redact(text, [key.value]))
