"""The Methodology page's document in sections (`documents.sections`): every heading of
docs/methodology.md lands in exactly one section, with the id Streamlit gives it, so a link to
any heading finds the section to draw."""

from pathlib import Path

from arena.dashboard import documents

DOCS = Path(__file__).resolve().parents[1] / "docs"


def test_sections_split_at_level_two_headings_outside_code() -> None:
    body = (
        "Intro line.\n\n"
        "## 1. First\n\ntext\n\n### 1.1 Sub part\n\nmore\n\n"
        "```markdown\n## 9. Not a heading\n```\n\n"
        "## Unnumbered: notes\n\nlast\n"
    )
    preamble, parts = documents.sections(body)

    assert preamble == "Intro line.\n\n"
    assert [p.key for p in parts] == ["1", "unnumbered-notes"]
    assert [p.title for p in parts] == ["1. First", "Unnumbered: notes"]
    assert parts[0].anchors == ("1-first", "1-1-sub-part")
    assert "## 9. Not a heading" in parts[0].text  # inside the fence, kept in its section
    assert preamble + "".join(p.text for p in parts) == body  # nothing lost, nothing doubled


def test_every_heading_of_the_methodology_is_in_one_section() -> None:
    _, body = documents.document(
        (DOCS / "methodology.md").read_text(encoding="utf-8"), ["methodology", "contract"]
    )
    preamble, parts = documents.sections(body)

    assert preamble + "".join(p.text for p in parts) == body
    anchors = [a for p in parts for a in p.anchors]
    assert len(anchors) == len(set(anchors))
    assert {"12-snapshot-methodology", "11-1-brier-score", "21-version-history"} <= set(anchors)
    assert [p.key for p in parts] == [str(n) for n in range(1, len(parts) + 1)]
    assert max(len(p.text) for p in parts) < len(body) / 2  # no section is most of it


def test_anchor_is_the_id_streamlit_gives_a_heading() -> None:
    assert documents.anchor("11.1 Brier score") == "11-1-brier-score"
    assert documents.anchor("12. Snapshot Methodology") == "12-snapshot-methodology"
    assert documents.anchor("18. Methodology notes: every interpretation we made") == (
        "18-methodology-notes-every-interpretation-we-made"
    )
