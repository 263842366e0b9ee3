"""The simulation check of the detectability projection (`projection_check`): on a controlled
world whose gap and SE are known, the projected cohorts carry the promised 80% power; on the
simulated world the projection's coverage is printed (`pytest -s`) for bench/RESULTS.md."""

import math

import pytest

from arena.analytics.stats.projection_check import controlled, simulated_world
from arena.core.detectability import POWER, z_sum


def test_the_projection_has_its_nominal_power_when_the_gap_is_known() -> None:
    # Gap z_sum/4, sd 1: the SE at k cohorts is 1/√k, so MDE = gap at k = 16 cohorts.
    seeds = 3000
    found = controlled(seeds, gap=z_sum() / 4, sd=1.0, k0=4, cap=80, rng_seed=1)
    assert found.median_projected == 16
    error = 4 * math.sqrt(POWER * (1 - POWER) / seeds)  # four Monte-Carlo sds (0.029)
    assert found.coverage_at_projection == pytest.approx(POWER, abs=error)
    # Stopping at the first rejection can only come sooner than the projected count.
    assert found.coverage >= found.coverage_at_projection
    assert found.never_within_cap == 0
    # Half the gap: four times the cohorts, the same power.
    half = controlled(seeds, gap=z_sum() / 8, sd=1.0, k0=4, cap=80, rng_seed=2)
    assert half.median_projected == 64
    assert half.coverage_at_projection == pytest.approx(POWER, abs=error)
    print(f"\ncontrolled world (k0 4, 16 cohorts projected): {found}")


@pytest.mark.parametrize("metric", ["return", "brier"])
def test_the_projection_on_the_simulated_world(metric: str) -> None:
    seeds, k0, cap = 40, 4, 200
    found = simulated_world(seeds, k0, cap, metric=metric, rng_seed=3)
    assert found.seeds + found.separable_at_k0 + found.beyond_cap <= seeds
    assert found.seeds > seeds // 2
    assert found.median_projected > k0  # a projected seed is one not separable at k0
    assert 0.0 <= found.coverage_at_projection <= found.coverage <= 1.0
    assert found.median_ratio > 0
    print(
        f"\nsimulated world, GPT-5.2 vs Claude Opus 4.5, {metric}, k0 {k0}, cap {cap}: "
        f"coverage {found.coverage:.2f} (test rejects at the projected count "
        f"{found.coverage_at_projection:.2f}), median actual/projected "
        f"{found.median_ratio:.2f}, median projected {found.median_projected:.0f}, "
        f"never within the cap {found.never_within_cap} of {found.seeds} judged "
        f"({found.beyond_cap} projected past the cap, {found.separable_at_k0} separable at k0)"
    )
