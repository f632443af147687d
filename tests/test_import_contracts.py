"""The architecture's import rules, held in `make test` (docs/architecture.md, "Package map").

The contracts themselves are import-linter's, in pyproject.toml ([tool.importlinter]): governance never
imports memoryui or devtools, governance's layers import only downwards, no import cycles at any depth.
This file runs `lint-imports` on them, and adds the two rules import-linter has no contract for: no
module imports another module's `_private` name, and the top of `governance/` holds only packages."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PRODUCT = ("governance", "memoryui", "devtools")
MAX_MODULE_LINES = 500


def test_the_import_contracts_hold():
    lint_imports = Path(sys.executable).parent / "lint-imports"
    result = subprocess.run(
        [str(lint_imports), "--no-cache"], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stdout[-6000:] + result.stderr[-2000:]
    assert "0 broken" in result.stdout


def _modules(*roots: str):
    for root in roots:
        for path in sorted((ROOT / root).rglob("*.py")):
            if "migrations" not in path.parts:
                yield path


def test_no_module_imports_another_modules_private_names():
    found = []
    for path in _modules(*PRODUCT):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (
                isinstance(node, ast.ImportFrom)
                and node.level == 0
                and (node.module or "").split(".")[0] in PRODUCT
            ):
                found += [
                    f"{path.relative_to(ROOT)}:{node.lineno}: from {node.module} import {a.name}"
                    for a in node.names
                    if a.name.startswith("_") and not a.name.startswith("__")
                ]
    assert found == [], "make the name public or move its user next to it:\n" + "\n".join(found)


def test_the_top_of_governance_holds_only_packages():
    loose = sorted(
        p.name
        for p in (ROOT / "governance").glob("*.py")
        if p.name not in ("__init__.py", "apps.py", "errors.py")
    )
    assert loose == [], f"put these modules into the package they belong to: {loose}"


def test_no_product_module_is_over_500_lines():
    long = [
        f"{p.relative_to(ROOT)}: {n}"
        for p in _modules("governance", "memoryui")
        if (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_MODULE_LINES
    ]
    assert long == [], "split these by what they do:\n" + "\n".join(long)
