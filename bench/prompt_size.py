"""Benchmark: size of the 500-market user prompt (bytes and estimated tokens per market).

Run: .venv/bin/python bench/prompt_size.py. The anchor implementation spent ~6 lines and ~70
tokens per market; the target is at most 40 estimated tokens (characters / 4) per market.
Markets come from the simulated world (realistic questions, named outcomes, negRisk groups).
"""

from datetime import UTC, datetime, timedelta
from decimal import Decimal

from arena.agents.prompts import PortfolioView, PromptMarket, estimate_tokens, user_prompt
from arena.sim.world import SimulatedWorld

START = datetime(2026, 1, 4, tzinfo=UTC)


def main() -> None:
    world = SimulatedWorld(7, START, n_initial=1500)
    at = START + timedelta(days=3)
    markets = [PromptMarket.from_parsed(m) for m in world.top_markets(at, 500)]
    portfolio = PortfolioView(Decimal("10000"), Decimal("2500"), Decimal("50"), [])
    empty = user_prompt(at, 1, portfolio, [])
    full = user_prompt(at, 1, portfolio, markets)
    n = len(markets)
    market_chars = len(full) - len(empty)
    print(f"markets: {n}")
    print(f"whole prompt: {len(full.encode()):,} bytes, {estimate_tokens(full):,} est. tokens")
    print(
        f"per market (whole prompt / n): {len(full.encode()) / n:.1f} bytes, "
        f"{estimate_tokens(full) / n:.1f} est. tokens"
    )
    print(
        f"per market (market lines only): {market_chars / n:.1f} chars, "
        f"{market_chars / 4 / n:.1f} est. tokens"
    )


if __name__ == "__main__":
    main()
