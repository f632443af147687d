"""A forgotten memory leaves the installation as a tombstone only: id, content hash, when, who. Never its
text, its embedding, a summary line citing it, or a meta entry quoting it — soft forgets (text still in the
row) included."""

from __future__ import annotations

from governance.models import Memory
from governance.propagation import embed_memories
from governance.services.memory import MemoryInput, memory_forget, memory_record
from governance.services.portability import scope_export_lines
from governance.services.summary import summary_build
from tests.governance.propagation.helpers import unique_marker


def _remember(scope, text, key=None):
    return memory_record(
        item=MemoryInput(
            scope=scope, kind="convention", key=key, text=text, source_kind="user", status="active"
        ),
        actor=None,
    )


def test_forgotten_text_and_its_embedding_never_appear_in_an_export(project_scope, owner):
    soft_marker, hard_marker = unique_marker(), unique_marker()
    soft = _remember(project_scope, f"The vault code is {soft_marker}", key="vault_code")
    hard = _remember(project_scope, f"The door code is {hard_marker}", key="door_code")
    kept = _remember(project_scope, "Export decks as PPTX.", key="export_format")
    embed_memories([soft.pk, hard.pk, kept.pk])
    soft.refresh_from_db()
    soft_vector = [f"{x:.6f}"[:8] for x in list(soft.embedding)[:4]]
    summary = summary_build(scope=project_scope, actor=owner)
    assert soft_marker in summary.text  # the summary quotes it until a rebuild
    memory_forget(memory_id=soft.pk, actor=owner, reason="asked", hard=False)
    memory_forget(memory_id=hard.pk, actor=owner, reason="asked", hard=True)
    assert Memory.objects.get(pk=soft.pk).text.endswith(soft_marker)  # a soft forget keeps the row's text

    text = "".join(scope_export_lines(project_scope.parent))
    assert soft_marker not in text and hard_marker not in text
    assert '"embedding"' not in text and not any(v in text for v in soft_vector)
    assert "Export decks as PPTX." in text  # the export is not empty: what is in force is there
    assert text.count('"type":"tombstone"') == 2
    tomb = next(line for line in text.splitlines() if f'"id":{soft.pk},' in line and '"tombstone"' in line)
    assert soft.content_hash in tomb and '"forgotten_by":"olivia"' in tomb
    assert '"text"' not in tomb and '"meta"' not in tomb
