"""The read side: SQL → pandas DataFrames for the pages, the CLI and the exports; never writes.

Five groups, each importing only the ones before it (tests/test_layers.py holds the rule):
`query` (plumbing: typed frames, scopes, the shared selects), `export` (CSV tables and the
export zip), `stats` (inference: leaderboard, bootstrap, nulls, calibration, replicates),
`views` (one read model per page), `replay` (the replay bundle and its verifier); `stored`
caches the hourly analyses and is the one module that reads both stats and views.
"""
