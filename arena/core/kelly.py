"""Kelly sizing for a binary bet at a stated probability (protocol extension, methodology §18).

Why pure and here: the `stated_probability` analyses (`arena.analytics.stats.stated`) measure a
model's stakes against the stake its own stated probability justifies, and the tests check
those figures against hand-computed cases. Vectorised over numpy arrays; no I/O.

A BUY of a side at price q pays 1/q per dollar if the side wins, 0 if it loses. With stated
win probability p, the growth-optimal (Kelly) fraction of the bankroll is

    f* = (p − q) / (1 − q)   when p > q,   else 0 (no edge: no bet),

and staking a fraction f of the bankroll grows it by the factor 1 − f + y·f/q (y = 1 if the
side won, 0 if it lost), so the realised log-growth of that bet is ln(1 + f·(y/q − 1)).
"""

import numpy as np
from numpy.typing import ArrayLike, NDArray


def kelly_fraction(probability: ArrayLike, price: ArrayLike) -> NDArray[np.float64]:
    """f* = (p − q) / (1 − q) where p > q, else 0; NaN where p or q is missing."""
    p = np.asarray(probability, dtype=np.float64)
    q = np.asarray(price, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        edge = np.where(p > q, (p - q) / (1.0 - q), 0.0)
    return np.where(np.isnan(p) | np.isnan(q), np.nan, edge)


def log_growth(fraction: ArrayLike, price: ArrayLike, won: ArrayLike) -> NDArray[np.float64]:
    """ln(1 + f·(y/q − 1)): the log-growth of the bankroll from staking fraction f at price q,
    y = 1 (won) or 0 (lost); −inf for a whole bankroll lost."""
    f = np.asarray(fraction, dtype=np.float64)
    q = np.asarray(price, dtype=np.float64)
    y = np.asarray(won, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.log1p(f * (y / q - 1.0))
