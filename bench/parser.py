"""Benchmark: the model-output parser on a 1 MB answer and on adversarial near-limit inputs.

Run: .venv/bin/python bench/parser.py — prints the worst time per input; record in RESULTS.md.
The parser sits on the decision path of every agent, so a hostile answer must stay cheap.
"""

import time

from arena.agents.json_extraction import MAX_RAW_CHARS
from arena.agents.parsing import parse_decision

HOLD = '{"action": "HOLD", "reasoning": "wait"}'
INPUTS = {
    "one_megabyte": ("All work and no play. " * 50_000 + HOLD)[-1_000_000:],
    "open_braces": "{" * (MAX_RAW_CHARS - 1),
    "deep_nesting": '{"a":[' * 33_000,
    "unterminated_string": '{"' + "{a " * 66_000,
    "open_keys": '{"' * 99_000,
    "escaped_quotes": '"{\\"' * 49_000,
    "empty_objects": "{}," * 66_000,
    "commas": ",]" * 99_000,
}


def main() -> None:
    for name, raw in INPUTS.items():
        worst = 0.0
        for _ in range(3):
            began = time.perf_counter()
            parse_decision(raw)
            worst = max(worst, time.perf_counter() - began)
        print(f"{name:22s} {len(raw):>9,d} chars  worst {worst * 1000:7.1f} ms")


if __name__ == "__main__":
    main()
