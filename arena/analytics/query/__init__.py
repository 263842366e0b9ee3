"""Query plumbing every read model shares: typed frames from selects, the scope of a read (a
cohort, a methodology version, a protocol group; live cohorts only), the agent selects and the
agent book (the one P/L rule). Imports no other group."""
