"""The packet as text: what the model reads must carry what the blocks say about force and contradiction."""

from governance.redaction.render import render_block, render_packet_text


def test_the_loser_of_a_contradiction_is_marked_in_the_text():
    block = {
        "memory_id": 7,
        "text": "Deploy on Fridays.",
        "status": "active",
        "flags": ["contradicts 9", "loses to 9: it is confirmed and in force"],
    }
    line = render_block("evidence", block)
    assert line == "- Deploy on Fridays. (CONTRADICTED by memory 9: it is confirmed and in force)"


def test_an_unflagged_block_and_an_unconfirmed_one():
    assert render_block("evidence", {"text": "Plain.", "status": "active"}) == "- Plain."
    assert "not a confirmed fact" in render_block("evidence", {"text": "A guess.", "status": "candidate"})


def test_negative_context_says_what_replaced_it():
    text = render_packet_text(
        {"negative": [{"text": "Export: PPTX", "replaced_by": {"text": "Export: PDF"}}]}
    )
    assert text == "## No longer in force\n- NO LONGER IN FORCE: Export: PPTX → replaced by: Export: PDF"
