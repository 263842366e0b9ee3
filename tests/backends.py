"""The two database backends every database test runs on (the `db_url` fixture's params)."""

import pytest

BACKENDS = [
    pytest.param("sqlite", id="sqlite"),
    pytest.param("postgres", id="postgres"),
]
