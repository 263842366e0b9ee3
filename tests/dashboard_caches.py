"""Isolation for tests that run the dashboard in-process (Streamlit AppTest): settings,
engines and Streamlit's caches are process-wide, so each test starts and ends without them."""

import streamlit as st

from arena.config import get_settings
from arena.storage.db import dispose_engines


def clear_dashboard_caches() -> None:
    """Forget cached settings, engines and Streamlit data/resources (the database may change)."""
    get_settings.cache_clear()
    dispose_engines()
    st.cache_data.clear()
    st.cache_resource.clear()
