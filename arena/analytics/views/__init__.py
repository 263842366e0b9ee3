"""The read models of the pages, one module per subject (cohorts, agents and families,
decisions, markets, curves, operations, the database, the home status, the protocol and its
versions, the simulated world, price provenance, execution, detectability, horizon, realised
returns, late entrants). They read query, export and stats; never stored."""
