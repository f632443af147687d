"""A bad import file changes nothing and says which line is wrong: each invariant the importer checks."""

from __future__ import annotations

import json

import pytest

from governance.models import AuditEvent, Memory, Principal, Relation, Scope, ScopeImport
from governance.services.memory import MemoryInput, memory_record, memory_supersede
from governance.services.portability import ImportFileError, scope_import
from governance.services.portability import format as fmt
from governance.services.portability.import_ import PRINCIPAL_KIND_CLASH
from tests.governance.portability.helpers import as_lines, export_records


@pytest.fixture
def exported(project_scope, owner):
    first = memory_record(
        item=MemoryInput(
            scope=project_scope,
            kind="convention",
            key="export_format",
            text="Export decks as PDF.",
            source_kind="user",
            status="active",
        ),
        actor=owner,
    )
    memory_supersede(
        memory_id=first.pk,
        text="Export decks as PPTX.",
        reason="client edits",
        source_kind="user",
        actor=owner,
    )
    memory_record(
        item=MemoryInput(
            scope=project_scope, kind="episodic", text="The client asked for PPTX.", source_kind="user"
        ),
        actor=owner,
    )
    return export_records("acme/slides")


def _index(records, rtype, **match):
    return next(
        i
        for i, r in enumerate(records)
        if r["type"] == rtype and all(r.get(k) == v for k, v in match.items())
    )


def _version(r):
    r[0]["version"] = 99
    return 1, fmt.UNKNOWN_VERSION.format(version=99, known=fmt.FORMAT_VERSION)


def _two_active(r):
    i = _index(r, "memory", revision=1)
    r[i]["status"] = "active"
    j = _index(r, "memory", revision=2)
    return max(i, j) + 1, fmt.TWO_ACTIVE.format(key="export_format", scope="copied")


def _old_revision_active(r):
    i = _index(r, "memory", revision=1)
    j = _index(r, "memory", revision=2)
    r[i]["status"], r[j]["status"] = "active", "superseded"
    return i + 1, "active at revision 1 below 2"


def _relation_outside(r):
    i = _index(r, "relation")
    r[i]["target"] = 987654
    return i + 1, fmt.UNKNOWN_REF.format(type="relation", field="target", what="memory", id=987654)


def _bad_status(r):
    i = _index(r, "memory", revision=2)
    r[i]["status"] = "in_force"
    return i + 1, fmt.BAD_VALUE.format(type="memory", field="status", value="in_force")


def _unknown_scope(r):
    i = _index(r, "memory", revision=2)
    r[i]["scope"] = 424242
    return i + 1, fmt.UNKNOWN_REF.format(type="memory", field="scope", what="scope", id=424242)


def _cut_off(r):
    del r[-1]
    return None, fmt.NO_END


def _missing_memory(r):
    i = _index(r, "memory", kind="episodic")
    del r[i]
    return len(r), fmt.COUNT_MISMATCH.format(expected=3, type="memories", found=2)


def _tampered_audit(r):
    i = _index(r, "audit", action="memory.supersede")
    r[i]["reason"] = "nothing happened"
    return i + 1, fmt.AUDIT_HASH


def _out_of_order(r):
    i = _index(r, "memory", kind="episodic")
    moved = r.pop(i)
    r.insert(len(r) - 1, moved)  # after the audit records, before the end record
    return len(r) - 1, fmt.OUT_OF_ORDER.format(type="memory", after="audit")


def _duplicate_id(r):
    i = _index(r, "memory", kind="episodic")
    r.insert(i + 1, dict(r[i]))
    return i + 2, fmt.DUPLICATE_ID.format(type="memory", id=r[i]["id"])


def _principal_kind_clash(r):
    i = _index(r, "principal", name="olivia")
    r[i]["kind"] = "agent"
    return i + 1, PRINCIPAL_KIND_CLASH.format(name="olivia", kind="user", file_kind="agent")


def _not_json(r):
    return 3, fmt.NOT_JSON


CASES = [
    _version,
    _two_active,
    _old_revision_active,
    _relation_outside,
    _bad_status,
    _unknown_scope,
    _cut_off,
    _missing_memory,
    _tampered_audit,
    _out_of_order,
    _duplicate_id,
    _principal_kind_clash,
    _not_json,
]


def _state():
    return (
        Memory.objects.count(),
        Relation.objects.count(),
        AuditEvent.objects.count(),
        Scope.objects.count(),
        Principal.objects.count(),
        ScopeImport.objects.count(),
    )


@pytest.mark.parametrize("breaks", CASES, ids=[c.__name__.strip("_") for c in CASES])
def test_a_bad_file_changes_nothing_and_names_the_line(exported, breaks):
    records = json.loads(json.dumps(exported))
    line, message = breaks(records)
    lines = as_lines(records)
    if breaks is _not_json:
        lines[2] = "{not json\n"
    before = _state()
    with pytest.raises(ImportFileError) as caught:
        scope_import(lines=lines, into="copied", actor=None)
    assert caught.value.line == line
    assert message in caught.value.message
    assert _state() == before
    assert not Scope.objects.filter(path="copied").exists()


def test_an_import_into_a_scope_that_already_has_the_key_is_refused(exported, project_scope):
    records = json.loads(json.dumps(exported))
    before = _state()
    with pytest.raises(ImportFileError) as caught:
        scope_import(lines=as_lines(records), into="acme/slides", actor=None)
    assert fmt.KEY_TAKEN.format(scope="acme/slides", key="export_format") in caught.value.message
    assert caught.value.line == _index(records, "memory", key="export_format") + 1
    assert _state() == before


def test_the_good_file_imports(exported):
    result = scope_import(lines=as_lines(exported), into="copied", actor=None)
    assert result.counts["memories"] == 3
    assert (
        Memory.objects.get(scope__path="copied", key="export_format", status="active").text
        == "Export decks as PPTX."
    )
