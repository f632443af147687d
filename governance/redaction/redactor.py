"""The walk that blanks forgotten memories inside stored JSON (packets, traces, turn texts)."""

from __future__ import annotations

REDACTED = "[forgotten]"
# Fields of a block that name structure, not content: kept so the packet still shows where a memory was.
KEEP_FIELDS = frozenset(
    {
        "memory_id",
        "kind",
        "slot",
        "status",
        "key",
        "revision",
        "role",
        "call_id",
        "tier",
        "scope",
        "occurred_at",
        "created_at",
        "tokens",
        "score",
        "rank",
        "reason",
        "paths",
    }
)


class Redactor:
    """Replaces the content of forgotten memories inside JSON, in place. A dict whose memory_id is forgotten
    loses every content field (so does a nested member such as a contradiction's `contradicted` or a
    negative block's `replaced_by`, which carry their own memory_id); any string anywhere whose content hash
    is a forgotten memory's is replaced too (the memory's text copied verbatim into a request or trace).
    A contradiction block stored before blocks carried their members (one string "W (contradicts: L)")
    loses its text when either side is forgotten. Hash results are memoised: the packets that cite one
    memory share most of their strings. governance.redaction.masking uses the same walk with its own replacement."""

    def __init__(self, ids: set[int], hashes: set[str], replacement: str = REDACTED):
        self.ids, self.hashes, self.replacement = ids, hashes, replacement
        self._seen: dict[str, bool] = {}

    def _purged_text(self, value: str) -> bool:
        from governance.models import content_hash

        hit = self._seen.get(value)
        if hit is None:
            hit = self._seen[value] = (
                bool(self.hashes) and len(value) <= 20_000 and content_hash(value) in self.hashes
            )
        return hit

    def _own(self, node: dict) -> bool:
        if node.get("memory_id") in self.ids:
            return True
        return node.get("contradicts") in self.ids and not isinstance(node.get("contradicted"), dict)

    def redact(self, value) -> tuple[object, bool]:
        """Return (value, changed); containers are changed in place, a top-level string is returned replaced."""
        if isinstance(value, str):
            return (self.replacement, True) if self._purged_text(value) else (value, False)
        changed = False
        stack = [value]
        while stack:
            node = stack.pop()
            if isinstance(node, dict):
                own = self._own(node)
                for k, v in node.items():
                    if isinstance(v, str):
                        if v != self.replacement and ((own and k not in KEEP_FIELDS) or self._purged_text(v)):
                            node[k], changed = self.replacement, True
                    elif isinstance(v, dict | list):
                        stack.append(v)
            elif isinstance(node, list):
                for i, v in enumerate(node):
                    if isinstance(v, str):
                        if self._purged_text(v):
                            node[i], changed = self.replacement, True
                    elif isinstance(v, dict | list):
                        stack.append(v)
        return value, changed
