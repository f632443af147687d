"""The layout of the code is the formatter's, so line length is held by a tool rather than by review.

`ruff format` (configured in pyproject.toml, [tool.ruff.format]) wraps code at 110 columns; what it cannot
wrap (a long string or comment) is left as written, which is why the lint rule E501 stays off. This test
fails when a file is not as the formatter would write it: run `ruff format .` and commit."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_the_tree_is_formatted():
    result = subprocess.run(
        [sys.executable, "-m", "ruff", "format", "--check", "."],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, "run `ruff format .`:\n" + result.stdout[-4000:] + result.stderr[-2000:]
