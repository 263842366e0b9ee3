"""The read models of the pages, one module per subject (cohorts, agents and families,
decisions, markets, curves, operations, the database, the home status, the protocol, the
simulated world). They read query, export and stats; never stored."""
