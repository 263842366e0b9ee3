"""The offline guard: `netguard` (the socket patch) and the `sitecustomize` that arms it in
every child process of a test run (this folder is first on the children's PYTHONPATH)."""
