"""Query plumbing every read model shares: typed frames from selects, the scope of a read
(cohort, v1), the agent selects and the agent book (the one P/L rule). Imports no other group."""
