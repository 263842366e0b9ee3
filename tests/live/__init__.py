"""Opt-in live checks against the real Gamma API and LLM endpoint (`pytest -m live`)."""
