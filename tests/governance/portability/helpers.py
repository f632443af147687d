from __future__ import annotations

import json

from governance.models import Scope
from governance.services.portability import scope_export_lines


def export_records(path: str) -> list[dict]:
    return [json.loads(line) for line in scope_export_lines(Scope.objects.get(path=path))]


def as_lines(records: list[dict]) -> list[str]:
    return [json.dumps(r) + "\n" for r in records]
