"""Text from outside (model answers, market payloads) made storable in any database."""

REPLACEMENT = "\ufffd"


def storable(text: str) -> str:
    """`text` without what a database refuses: NUL characters (PostgreSQL) and lone UTF-16
    surrogates (not encodable as UTF-8). Each becomes U+FFFD, so nothing silently vanishes."""
    if "\x00" in text:
        text = text.replace("\x00", REPLACEMENT)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        text = text.encode("utf-8", "surrogatepass").decode("utf-8", "replace")
    return text


REPLICATE_LABEL = " · r"


def replicate_name(display_name: str, replicate: int, replicates: int) -> str:
    """An agent's display name: its family's, with its replicate when the family fields
    several agents in the cohort (charts and tables that list agents must tell them apart)."""
    return display_name if replicates <= 1 else f"{display_name}{REPLICATE_LABEL}{replicate}"
