"""Forecaster Arena: LLMs paper-trade Polymarket markets in weekly cohorts (methodology v1)."""

__version__ = "0.1.0"
