"""The stylesheet's colour pairs, light and dark, have a WCAG contrast of at least 4.5:1 (a fast check of
static/css/dashboard.css without a browser; tests/browser/test_readability.py checks the rendered pages)."""

import re
from pathlib import Path

import pytest

CSS = (Path(__file__).resolve().parents[2] / "static" / "css" / "dashboard.css").read_text()
DARK_AT = CSS.index("@media (prefers-color-scheme: dark)")
LIGHT = dict(re.findall(r"--([\w-]+):\s*(#[0-9a-fA-F]{3,6})\b", CSS[:DARK_AT]))
DARK = {
    **LIGHT,
    **dict(re.findall(r"--([\w-]+):\s*(#[0-9a-fA-F]{3,6})\b", CSS[DARK_AT : CSS.index("}\n}", DARK_AT)])),
}

# (text colour, background) as the rules of the stylesheet use them
PAIRS = [
    ("fg", "bg"),
    ("fg", "card"),
    ("muted", "card"),
    ("muted", "bg"),
    ("muted", "chip"),
    ("accent", "card"),
    ("accent", "bg"),
    ("top-fg", "top-bg"),
    ("top-muted", "top-bg"),
    ("top-fg", "top-hover"),
    ("chip-fg", "chip"),
    ("ok-fg", "ok-bg"),
    ("warn-fg", "warn-bg"),
    ("info-fg", "info-bg"),
    ("bad-fg", "bad-bg"),
    ("worse-fg", "bad-bg"),
    ("old-fg", "chip"),
    ("retired-fg", "chip"),
    ("purple-fg", "purple-bg"),
    ("primary-fg", "primary-bg"),
    ("bad", "card"),
    ("warn", "card"),
    ("fg", "button"),
    ("fg", "field"),
    ("fg", "code-bg"),
    ("fg", "changed"),
    ("fg", "info-bg"),
    ("fg", "ok-bg"),
    ("fg", "quote-bg"),
    ("bad-fg", "card"),
    ("ok-fg", "card"),
    ("rel-supersedes", "card"),
    ("rel-contradicts", "card"),
    ("rel-supports", "card"),
    ("rel-derived-from", "card"),
]


def _luminance(hex_colour: str) -> float:
    h = hex_colour.lstrip("#")
    h = "".join(c * 2 for c in h) if len(h) == 3 else h
    channels = [int(h[i : i + 2], 16) / 255 for i in (0, 2, 4)]
    r, g, b = (c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4 for c in channels)
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def contrast(a: str, b: str) -> float:
    hi, lo = sorted((_luminance(a), _luminance(b)), reverse=True)
    return (hi + 0.05) / (lo + 0.05)


def test_contrast_formula_matches_known_values():
    assert round(contrast("#000", "#fff"), 1) == 21.0
    assert round(contrast("#767676", "#fff"), 2) == 4.54


@pytest.mark.parametrize("theme", ["light", "dark"])
def test_every_text_colour_pair_of_the_stylesheet_reaches_4_5_to_1(theme):
    colours = LIGHT if theme == "light" else DARK
    low = {
        (fg, bg): round(contrast(colours[fg], colours[bg]), 2)
        for fg, bg in PAIRS
        if contrast(colours[fg], colours[bg]) < 4.5
    }
    assert low == {}


def test_the_dark_theme_redefines_every_colour_and_the_page_is_dark():
    dark_only = dict(
        re.findall(r"--([\w-]+):\s*(#[0-9a-fA-F]{3,6})\b", CSS[DARK_AT : CSS.index("}\n}", DARK_AT)])
    )
    assert set(dark_only) == set(LIGHT)
    assert _luminance(DARK["bg"]) < 0.02 and _luminance(DARK["fg"]) > 0.8
    # no colour outside the variables, so nothing stays light in the dark theme
    rules = CSS[CSS.index("}\n}", DARK_AT) :].replace(FORCED_DARK, "")
    assert re.findall(r"#[0-9a-fA-F]{3,6}\b", rules) == []


FORCED_AT = CSS.index(':root[data-theme="dark"]')
FORCED_DARK = CSS[FORCED_AT : CSS.index("}", FORCED_AT) + 1]


def test_the_dark_theme_picked_by_the_user_is_the_systems_dark_theme():
    forced = dict(re.findall(r"--([\w-]+):\s*(#[0-9a-fA-F]{3,6})\b", FORCED_DARK))
    system = dict(
        re.findall(r"--([\w-]+):\s*(#[0-9a-fA-F]{3,6})\b", CSS[DARK_AT : CSS.index("}\n}", DARK_AT)])
    )
    assert forced == system


@pytest.mark.parametrize("theme", ["light", "dark"])
def test_the_focus_outline_reaches_3_to_1_on_every_background(theme):
    colours = LIGHT if theme == "light" else DARK
    low = {
        bg: round(contrast(colours["focus"], colours[bg]), 2)
        for bg in ("bg", "card", "field", "button", "quote-bg")
        if contrast(colours["focus"], colours[bg]) < 3
    }
    low.update(
        {
            bg: round(contrast(colours["top-focus"], colours[bg]), 2)
            for bg in ("top-bg", "top-hover")
            if contrast(colours["top-focus"], colours[bg]) < 3
        }
    )
    assert low == {}
