"""The rule extractor proposes a convention (or a correction) only for what is addressed as one: "Always export the slides
as PDF.", "Don't use bullet points.", "You must cite the source." The same words in what a person says of
themselves or of the world are not one ("I've always been fascinated by …", "I don't think so", "you must be
so excited", "I'll make sure to bring cash"), nor is a question, unless it asks for a rule ("Can you always
answer in French?"). On the real development conversations most of what the two rules proposed was of the
second kind (docs/evaluation.md, "Rules read from a conversation")."""

from __future__ import annotations

import pytest

from governance.services.extraction import RuleExtractor


def extracted(text: str) -> str | None:
    found = RuleExtractor().extract([{"role": "user", "content": text, "ref": "s:0"}])
    assert len(found) <= 1
    return found[0].rule if found else None


@pytest.mark.parametrize(
    ("text", "rule"),
    [
        ("Always export the slides as PDF.", "standing_instruction"),
        ("Never use passive voice.", "standing_instruction"),
        ("Please deliver the deck in PDF format from now on.", "standing_instruction"),
        ("From now on, do not attach the raw data file to the weekly report.", "standing_instruction"),
        ("Meeting invitations always use UTC.", "standing_instruction"),
        ("I want you to always answer in French.", "standing_instruction"),
        ("We always deploy on Fridays.", "standing_instruction"),
        ("I always want the totals in euros.", "standing_instruction"),
        ("Can you always answer in French?", "standing_instruction"),
        ("Don't use bullet points.", "constraint"),
        ("Please don't cc the legal team.", "constraint"),
        ("Output the table, but do not show the word output.", "constraint"),
        ("You must cite the source.", "constraint"),
        ("All amounts in the quarterly report must be in EUR.", "constraint"),
        ("The report must not exceed ten pages.", "constraint"),
        ("Make sure the summary stays under 100 words.", "constraint"),
        ("Change the export format to PDF instead.", "correction"),
        ("Not PDF but PPTX.", "correction"),
        ("It's not Monday, but Tuesday.", "correction"),
        ("Can you make it PPTX instead?", "correction"),
        ("Use the blue logo instead of the red one.", "correction"),
        ("I prefer tea in the morning.", "preference"),
        ("I don't want to spend any money on this.", "preference"),
        ("以后都用PDF导出。", "standing_instruction"),
        ("不要在周报里附原始数据。", "constraint"),
    ],
)
def test_what_is_addressed_as_a_rule_is_proposed(text, rule):
    assert extracted(text) == rule


@pytest.mark.parametrize(
    "text",
    [
        "I've always been fascinated by the Church of the Savior on Spilled Blood.",
        "I never knew dandelions could hybridize with other species.",
        "It always refreshes my soul.",
        "The lighting design is always so creative.",
        "The user can always type skip if they want to move on.",
        "I don't think investing in sports programs should be a priority.",
        "They don't have a big chain.",
        "Sometimes it's hard when things don't go my way.",
        "Wow, Jon, you must be so excited!",
        "It must have been special at your wedding.",
        "Can you recommend some must-visit spots for breakfast?",
        "Do you have any recommendations for must-visit shopping districts in Seoul?",
        "I'll make sure to come with an empty stomach and bring plenty of cash.",
        "I'm planning a bike ride this weekend and want to make sure I'm prepared.",
        "I want to make sure I get the total cost correct.",
        "I'm not sure the export format matters much, but let's start on the Q3 deck.",
        "We did not get the export format right last time, but the deck itself was fine.",
        "It's not only about the export format of the Q3 deck but also about the speaker notes.",
        "Can I use kosher salt instead of flaky sea salt?",
    ],
)
def test_the_same_words_said_of_oneself_or_the_world_are_no_rule(text):
    assert extracted(text) is None
