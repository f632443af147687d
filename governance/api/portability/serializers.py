"""Input and Output shapes of the scope import. Inputs validate only; services do every write."""

from __future__ import annotations

from rest_framework import serializers

from governance.services.portability.import_ import GRANTS_DROP, GRANTS_KEEP


class ScopeImportInput(serializers.Serializer):
    file = serializers.FileField(help_text="A file made by an export (JSON lines).")
    name = serializers.RegexField(
        r"^[a-z0-9][a-z0-9_-]{0,62}$",
        required=False,
        help_text="Import as a new child scope of this name; without it, into this scope.",
    )
    grants = serializers.ChoiceField(
        choices=[GRANTS_DROP, GRANTS_KEEP],
        default=GRANTS_DROP,
        help_text="drop the file's grants (default) or keep them (never above yours).",
    )
    preview = serializers.BooleanField(
        default=False, help_text="Check the file and count it; change nothing."
    )


class ScopeImportOutput(serializers.Serializer):
    root = serializers.CharField(help_text="The scope the export's root became.")
    preview = serializers.BooleanField()
    import_id = serializers.IntegerField(
        allow_null=True, help_text="The import's record (null for a preview)."
    )
    counts = serializers.DictField(child=serializers.IntegerField())
