"""Arms the suite's offline guard in a child process (Python imports `sitecustomize` at start).

The suite puts this folder first on PYTHONPATH and names the guard's file in
OFFLINE_GUARD_LOG (tests/offline_guard.py), so every Python it starts, directly or through
another (an `arena` command, a Streamlit server, an xdist worker), refuses and records a
connection outside loopback (tests/offline/netguard.py). Without the variable it does nothing.
"""

from netguard import install_from_env

install_from_env()
