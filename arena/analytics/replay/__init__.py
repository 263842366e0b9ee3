"""Replay bundles: what a finished cohort's bundle holds, its canonical files, its
verification from the files alone, its schedule status and the kept copies. They read query,
stats and export only."""
