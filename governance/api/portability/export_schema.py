"""The export file's lines, described for the OpenAPI document: one schema per record type, and
`ExportLine`, the one of them a line is (by its `type`). Only a description: the lines are written by
governance.services.portability.export and checked on import by its reader (docs/portability.md);
tests/governance/api/test_export_schema.py validates a real export against these schemas."""

from __future__ import annotations

from drf_spectacular.utils import PolymorphicProxySerializer
from rest_framework import serializers


def _type(name: str) -> serializers.ChoiceField:
    return serializers.ChoiceField(choices=[name], help_text=f"Always `{name}`.")


def _ref(help_text: str = "", null: bool = False) -> serializers.IntegerField:
    """An id of a record of this file (not of the exporting database's tables, for the reader)."""
    return serializers.IntegerField(allow_null=null, help_text=help_text)


def _object(help_text: str = "") -> serializers.DictField:
    """A JSON object whose values may be any JSON."""
    return serializers.DictField(child=serializers.JSONField(help_text="any JSON value"), help_text=help_text)


def _time(null: bool = True) -> serializers.DateTimeField:
    return serializers.DateTimeField(allow_null=null)


class ExportCountsOutput(serializers.Serializer):
    scopes = serializers.IntegerField()
    principals = serializers.IntegerField()
    grants = serializers.IntegerField()
    memories = serializers.IntegerField()
    tombstones = serializers.IntegerField()
    relations = serializers.IntegerField()
    summaries = serializers.IntegerField()
    audit = serializers.IntegerField()


class ExportWrittenCountsOutput(serializers.Serializer):
    """The end record's counts: a section with no record is left out."""

    scopes = serializers.IntegerField(required=False)
    principals = serializers.IntegerField(required=False)
    grants = serializers.IntegerField(required=False)
    memories = serializers.IntegerField(required=False)
    tombstones = serializers.IntegerField(required=False)
    relations = serializers.IntegerField(required=False)
    summaries = serializers.IntegerField(required=False)
    audit = serializers.IntegerField(required=False)


class ExportSourceOutput(serializers.Serializer):
    installation = serializers.CharField(help_text="`pg:<system identifier>`, or the host name.")
    host = serializers.CharField()


class ExportHeaderLineOutput(serializers.Serializer):
    type = _type("header")
    format = serializers.ChoiceField(choices=["memory-governance-export"])
    version = serializers.IntegerField(help_text="The format version (1).")
    source = ExportSourceOutput()
    workspace = serializers.CharField()
    root = serializers.CharField(help_text="The exported scope's path.")
    exported_at = _time(null=False)
    counts = ExportCountsOutput(help_text="Per section, taken when the export starts.")


class ExportScopeLineOutput(serializers.Serializer):
    type = _type("scope")
    id = _ref()
    path = serializers.CharField(allow_blank=True, help_text="Relative to the root (`\"\"` for the root).")
    parent = _ref("The parent scope record (null for the root).", null=True)
    require_two_reviewers = serializers.BooleanField()


class ExportPrincipalLineOutput(serializers.Serializer):
    type = _type("principal")
    id = _ref()
    name = serializers.CharField()
    kind = serializers.CharField(help_text="user, group or agent. Never a token, password hash or e-mail.")


class ExportGrantLineOutput(serializers.Serializer):
    type = _type("grant")
    principal = _ref()
    scope = _ref()
    role = serializers.CharField()
    granted_by = _ref(null=True)


class ExportMemoryLineOutput(serializers.Serializer):
    type = _type("memory")
    id = _ref()
    scope = _ref()
    created_by = _ref(null=True)
    confirmed_by = _ref(null=True)
    meta = _object("References to forgotten memories masked.")
    kind = serializers.CharField()
    key = serializers.CharField(allow_null=True)
    revision = serializers.IntegerField()
    text = serializers.CharField(allow_blank=True)
    source_kind = serializers.CharField()
    source_ref = serializers.CharField(allow_blank=True)
    session = serializers.CharField(allow_blank=True)
    speaker = serializers.CharField(allow_blank=True)
    call_id = serializers.CharField(allow_blank=True)
    task_type = serializers.CharField(allow_blank=True)
    status = serializers.CharField()
    confidence = serializers.FloatField()
    importance = serializers.FloatField()
    tier = serializers.CharField()
    content_hash = serializers.CharField()
    activation_a0 = serializers.FloatField()
    decay_rate = serializers.FloatField()
    activation_log_k = serializers.FloatField()
    reinforcement_count = serializers.IntegerField()
    occurred_at = _time()
    valid_from = _time()
    valid_until = _time()
    confirmed_at = _time()
    last_reinforced_at = _time()
    created_at = _time(null=False)


class ExportTombstoneLineOutput(serializers.Serializer):
    """A forgotten memory: never its text, nor anything derived from it."""

    type = _type("tombstone")
    id = _ref()
    scope = _ref()
    kind = serializers.CharField()
    key = serializers.CharField(allow_null=True)
    revision = serializers.IntegerField()
    tier = serializers.CharField()
    content_hash = serializers.CharField()
    forgotten_at = _time()
    forgotten_by = serializers.CharField(allow_blank=True)
    created_at = _time(null=False)


class ExportRelationLineOutput(serializers.Serializer):
    type = _type("relation")
    source = _ref()
    target = _ref()
    kind = serializers.CharField()
    reason = serializers.CharField(allow_blank=True)
    actor = _ref(null=True)
    created_at = _time(null=False)


class ExportSummaryLineOutput(serializers.Serializer):
    type = _type("summary")
    scope = _ref()
    lines = serializers.ListField(child=_object(), help_text="Each with the memory ids it cites.")
    writer = serializers.CharField()
    built_at = _time()
    built_by = _ref(null=True)
    dropped_lines = serializers.IntegerField(help_text="Lines left out: they cite a forgotten memory.")


class ExportAuditLineOutput(serializers.Serializer):
    type = _type("audit")
    id = serializers.IntegerField()
    at = _time(null=False)
    actor = serializers.CharField(allow_blank=True)
    action = serializers.CharField()
    target_type = serializers.CharField(allow_blank=True)
    target_id = serializers.CharField(allow_blank=True, allow_null=True)
    scope_path = serializers.CharField(allow_blank=True)
    before = serializers.CharField(allow_blank=True, allow_null=True)
    after = serializers.CharField(allow_blank=True, allow_null=True)
    reason = serializers.CharField(allow_blank=True)
    data = _object()
    prev_hash = serializers.CharField(allow_blank=True)
    hash = serializers.CharField()


class ExportEndLineOutput(serializers.Serializer):
    type = _type("end")
    counts = ExportWrittenCountsOutput(
        help_text="The records actually written; an import refuses a file that disagrees."
    )


RECORDS = {
    "header": ExportHeaderLineOutput,
    "scope": ExportScopeLineOutput,
    "principal": ExportPrincipalLineOutput,
    "grant": ExportGrantLineOutput,
    "memory": ExportMemoryLineOutput,
    "tombstone": ExportTombstoneLineOutput,
    "relation": ExportRelationLineOutput,
    "summary": ExportSummaryLineOutput,
    "audit": ExportAuditLineOutput,
    "end": ExportEndLineOutput,
}

EXPORT_LINE = PolymorphicProxySerializer(
    component_name="ExportLine",
    serializers=RECORDS,
    resource_type_field_name="type",
    many=False,
)
