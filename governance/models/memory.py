import functools
import hashlib
import hmac

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.db.models.expressions import RawSQL
from django.utils import timezone
from pgvector.django import VectorField

from governance.models import fulltext, lexical
from governance.models.activation import activation_sql


class Kind(models.TextChoices):
    WORKING = "working", "Working"
    EPISODIC = "episodic", "Episodic"
    SEMANTIC = "semantic", "Semantic"
    PREFERENCE = "preference", "Preference"
    CONVENTION = "convention", "Convention"
    METHOD = "method", "Method"
    STAGE_FACT = "stage_fact", "Stage fact"
    EXTERNAL = "external", "External"


class Status(models.TextChoices):
    CANDIDATE = "candidate", "Candidate"
    PROPOSED = "proposed", "Proposed"
    ACTIVE = "active", "Active"
    SUPERSEDED = "superseded", "Superseded"
    RETIRED = "retired", "Retired"
    FORGOTTEN = "forgotten", "Forgotten"
    REJECTED = "rejected", "Rejected"


class SourceKind(models.TextChoices):
    USER = "user", "User said"
    TOOL_RESULT = "tool_result", "Tool result"
    SUMMARY = "summary", "Summary"
    EXTERNAL_DOCUMENT = "external_document", "External document"
    MODEL_INFERENCE = "model_inference", "Model inference"
    REVIEWER = "reviewer", "Reviewer"
    ASSISTANT = "assistant", "Assistant said"


class Tier(models.TextChoices):
    SHORT = "short", "Short-term trace"
    MID = "mid", "Mid-term abstraction"
    LONG = "long", "Long-term commitment"


# Allowed status changes; the same table is enforced by a trigger in migration 0002, so no code path
# (not even a raw UPDATE) can bring a superseded, retired or forgotten memory back.
TRANSITIONS: dict[str, set[str]] = {
    Status.CANDIDATE: {Status.PROPOSED, Status.ACTIVE, Status.REJECTED, Status.RETIRED, Status.FORGOTTEN},
    Status.PROPOSED: {Status.ACTIVE, Status.REJECTED, Status.RETIRED, Status.FORGOTTEN},
    Status.ACTIVE: {Status.SUPERSEDED, Status.RETIRED, Status.FORGOTTEN},
    Status.SUPERSEDED: {Status.RETIRED, Status.FORGOTTEN},
    Status.RETIRED: {Status.FORGOTTEN},
    Status.REJECTED: {Status.FORGOTTEN},
    Status.FORGOTTEN: set(),
}

# Statuses a context packet may present as in force / may cite at all.
IN_FORCE = (Status.ACTIVE,)
RECALLABLE = (Status.ACTIVE, Status.CANDIDATE, Status.PROPOSED)

# Decay rate λ per kind, per day (half-life = ln 2 / λ). Working memory fades in hours, conventions
# last for months. Tuned by hand; see docs/architecture.md.
DECAY_PER_DAY: dict[str, float] = {
    Kind.WORKING: 2.0,
    Kind.EPISODIC: 0.1,
    Kind.SEMANTIC: 0.01,
    Kind.PREFERENCE: 0.02,
    Kind.CONVENTION: 0.01,
    Kind.METHOD: 0.02,
    Kind.STAGE_FACT: 0.05,
    Kind.EXTERNAL: 0.03,
}


# meta keys of near-duplicates (governance/services/near_duplicate.py): on a kept memory, the sources of the
# repeats merged into it; on a proposal, the memory it repeats.
NEAR_DUPLICATES = "near_duplicates"
NEAR_DUPLICATE_OF = "near_duplicate_of"

HASH_SALT = "governance.memory.content_hash"


@functools.lru_cache(maxsize=4)
def _hmac_key(secret: str) -> bytes:
    # Django's salted_hmac derives its key the same way; kept here so the redactor, which hashes every
    # string of thousands of packets, does not derive it again per string.
    return hashlib.sha256((HASH_SALT + secret).encode()).digest()


def keyed_digest(plain_sha256: str) -> str:
    """HMAC-SHA256 (key from MEMORY_HASH_KEY, else SECRET_KEY; equal to Django's salted_hmac with HASH_SALT) of
    a text's plain SHA-256 hex digest. Two steps so migration 0012 could key the hashes of tombstones whose
    text was already purged."""
    secret = getattr(settings, "MEMORY_HASH_KEY", "") or settings.SECRET_KEY
    return hmac.new(_hmac_key(secret), plain_sha256.encode(), hashlib.sha256).hexdigest()


def content_hash(text: str) -> str:
    """The memory's content hash: keyed, so a tombstone or an audit event cannot confirm a guessed short text
    (an unsalted SHA-256 of a 4-digit PIN is found by trying 10 000 texts)."""
    return keyed_digest(hashlib.sha256(text.encode("utf-8")).hexdigest())


# The memory lists' keyword predicate (MemoryQuerySet.keyword).
KEYWORD_SQL = fulltext.memory_matches("governance_memory", fulltext.plainto_tsquery())


class MemoryQuerySet(models.QuerySet):
    """The filters and annotations the selectors share (what `ScopeQuerySet` is for scopes)."""

    def not_forgotten(self) -> "MemoryQuerySet":
        """Every status but forgotten: a forgotten text never comes back."""
        return self.exclude(status=Status.FORGOTTEN)

    def with_activation(self, at=None) -> "MemoryQuerySet":
        """Annotates `activation`, A(t) at `at` (now when None), by governance.models.activation."""
        return self.annotate(activation=RawSQL(activation_sql(), [at or timezone.now()]))

    def keyword(self, q: str) -> "MemoryQuerySet":
        """Memories whose keyword terms hold every term of `q`, through the stored vector and its GIN index
        (governance.models.fulltext): the same terms as the index keeps (governance.models.lexical). A query
        with no terms (only stopwords or punctuation) matches nothing. A forgotten memory is never matched,
        even when the list asks for forgotten rows: a soft-forgotten row keeps its terms, and a count of 1
        for the right PIN and 0 for a wrong one would confirm a guess though the text comes back masked."""
        words = " ".join(lexical.terms(q or ""))
        if not words:
            return self.none()
        return self.extra(where=[KEYWORD_SQL], params=[words]).not_forgotten()

    def light(self) -> "MemoryQuerySet":
        """Without the wide columns a list never shows (the vector, the lexical vector, meta)."""
        return self.defer("embedding", "lexical", "meta")


class Memory(models.Model):
    """One immutable version of one remembered thing. A change of content is a new row (revision);
    a change of state goes through a service and leaves an audit event."""

    # Not a column: set by the memory services on the memory they return when four-eyes made them record
    # an approval or a request instead of acting (services.memory.FourEyesPending); None otherwise.
    four_eyes_pending = None

    scope = models.ForeignKey("governance.Scope", on_delete=models.PROTECT, related_name="memories")
    kind = models.CharField(max_length=12, choices=Kind.choices)
    # NULL, not "", for unkeyed memories: the unique indexes on (scope, key) apply to keyed rows only.
    key = models.CharField(max_length=200, null=True, blank=True)  # noqa: DJ001
    revision = models.PositiveIntegerField(default=1)
    text = models.TextField()
    # Normalised words and CJK bigrams for the full-text index (PostgreSQL's parsers do not split Chinese).
    lexical = models.TextField(default="", blank=True)

    source_kind = models.CharField(max_length=20, choices=SourceKind.choices)
    source_ref = models.CharField(max_length=500, blank=True, default="")
    session = models.CharField(max_length=200, blank=True, default="")
    speaker = models.CharField(max_length=200, blank=True, default="")
    call_id = models.CharField(max_length=200, blank=True, default="")
    task_type = models.CharField(max_length=100, blank=True, default="")
    occurred_at = models.DateTimeField(null=True, blank=True)

    status = models.CharField(max_length=10, choices=Status.choices)
    confidence = models.FloatField(default=0.5)
    importance = models.FloatField(default=0.5)
    tier = models.CharField(max_length=5, choices=Tier.choices, default=Tier.SHORT)
    valid_from = models.DateTimeField(null=True, blank=True)
    valid_until = models.DateTimeField(null=True, blank=True)
    content_hash = models.CharField(max_length=64)

    embedding = VectorField(dimensions=settings.EMBEDDING_DIMENSIONS, null=True, blank=True)
    embedding_model = models.CharField(max_length=100, blank=True, default="")
    # Hash of the text the embedding was computed from: the reconciler re-embeds when it differs.
    embedding_hash = models.CharField(max_length=64, blank=True, default="")
    # Who embeds this row: set by a conditional UPDATE (governance.propagation.claim_rows) before the
    # text goes to the embedder, so an importer and a worker never both embed it; expires like a lease.
    embedding_claimed_until = models.DateTimeField(null=True, blank=True)

    # Activation A(t) = exp(-λ·t)·K with t in days since ACTIVATION_EPOCH; log K kept so SQL can rank.
    activation_a0 = models.FloatField(default=1.0)
    decay_rate = models.FloatField(default=0.1)
    activation_log_k = models.FloatField(default=0.0)
    last_reinforced_at = models.DateTimeField(null=True, blank=True)
    reinforcement_count = models.PositiveIntegerField(default=0)

    created_by = models.ForeignKey(
        "governance.Principal", null=True, blank=True, on_delete=models.SET_NULL, related_name="memories"
    )
    # Who put this memory in force: a principal holding the confirm right on its scope, when it confirmed
    # it or wrote it active (confirmed_by NULL with confirmed_at set: the system, for the demo and
    # migrations). Only rows with confirmed_at are pinned as constraints or preferences (docs/governance.md).
    confirmed_by = models.ForeignKey(
        "governance.Principal", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    confirmed_at = models.DateTimeField(null=True, blank=True)
    meta = models.JSONField(default=dict, blank=True)
    purged_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    objects = MemoryQuerySet.as_manager()

    class Meta:
        verbose_name_plural = "memories"
        constraints = [
            models.UniqueConstraint(
                fields=["scope", "key"],
                condition=models.Q(status="active", key__isnull=False),
                name="memory_one_active_per_key",
            ),
            models.UniqueConstraint(
                fields=["scope", "key", "revision"],
                condition=models.Q(key__isnull=False),
                name="memory_unique_key_revision",
            ),
            # One turn of a conversation is stored once: two importers of one scope at the same time (or a
            # client re-sending an event) cannot store its episode twice (governance/services/events.py).
            models.UniqueConstraint(
                fields=["scope", "session", "source_ref"],
                condition=models.Q(kind="episodic") & ~models.Q(source_ref=""),
                name="memory_one_episode_per_turn",
            ),
            models.CheckConstraint(
                condition=models.Q(status__in=[s.value for s in Status]), name="memory_status_valid"
            ),
            models.CheckConstraint(
                condition=models.Q(kind__in=[k.value for k in Kind]), name="memory_kind_valid"
            ),
            models.CheckConstraint(
                condition=models.Q(tier__in=[t.value for t in Tier]), name="memory_tier_valid"
            ),
            models.CheckConstraint(
                condition=models.Q(source_kind__in=[s.value for s in SourceKind]),
                name="memory_source_kind_valid",
            ),
            models.CheckConstraint(
                condition=models.Q(confidence__gte=0, confidence__lte=1), name="memory_confidence_range"
            ),
            models.CheckConstraint(
                condition=models.Q(importance__gte=0, importance__lte=1), name="memory_importance_range"
            ),
            models.CheckConstraint(condition=models.Q(revision__gte=1), name="memory_revision_positive"),
            models.CheckConstraint(
                condition=models.Q(valid_until__isnull=True)
                | models.Q(valid_from__isnull=True)
                | models.Q(valid_until__gt=models.F("valid_from")),
                name="memory_validity_window",
            ),
        ]
        indexes = [
            models.Index(fields=["scope", "status", "kind"], name="memory_scope_status_kind"),
            models.Index(fields=["scope", "key", "-revision"], name="memory_scope_key_rev"),
            models.Index(fields=["scope", "session", "-occurred_at"], name="memory_scope_session"),
            models.Index(fields=["status", "-created_at"], name="memory_status_created"),
            # A query that repeats a hard-forgotten text is stored redacted (recall/packet.py): one lookup
            # per stored turn, over the few purged rows only.
            models.Index(
                fields=["content_hash"], name="memory_purged_hash", condition=Q(purged_at__isnull=False)
            ),
            models.Index(
                fields=["id"], name="memory_embedding_backlog", condition=models.Q(embedding__isnull=True)
            ),
            # Memories no longer in force by the turn they cite: adjudication finds the episodes whose
            # lesson was superseded, retired or forgotten (governance.recall.adjudicate). Partial: only the
            # few rows out of force, so writes of active memories never touch it.
            models.Index(
                fields=["scope", "source_ref"],
                name="memory_stale_source_ref",
                condition=models.Q(status__in=["superseded", "retired", "forgotten"])
                & ~models.Q(source_ref=""),
            ),
            # A session's requirements (governance.recall.session reads them on every turn of a session):
            # what the user stated, never the session's episodes, however many its tool logs.
            models.Index(
                fields=["scope", "session", "occurred_at"],
                name="memory_session_requirements",
                condition=models.Q(source_kind="user") & ~models.Q(kind="episodic") & ~models.Q(session=""),
            ),
            # No HNSW index over the whole table: big scopes get one each, built and dropped by
            # governance.recall.vector_index (a read sees a few percent of the rows, and a global graph
            # filtered that hard loses recall; docs/api.md, "Vector search").
        ]

    def __str__(self) -> str:
        label = f"{self.key} r{self.revision}" if self.key else f"#{self.pk}"
        return f"{label} [{self.status}] {self.text[:60]}"


class ReinforcementEvent(models.Model):
    """One reinforcement of a memory: a recall that used it, or a reviewer's boost. Append-only."""

    class Reason(models.TextChoices):
        RECALL = "recall", "Used in a context packet"
        REVIEW = "review", "Confirmed or boosted by a reviewer"
        WRITE = "write", "Written again (same content)"

    memory = models.ForeignKey(Memory, on_delete=models.CASCADE, related_name="reinforcements")
    at = models.DateTimeField()
    weight = models.FloatField()
    reason = models.CharField(max_length=10, choices=Reason.choices)
    turn = models.ForeignKey("governance.Turn", null=True, blank=True, on_delete=models.SET_NULL)
    actor = models.ForeignKey("governance.Principal", null=True, blank=True, on_delete=models.SET_NULL)

    class Meta:
        indexes = [models.Index(fields=["memory", "at"])]
        constraints = [
            models.CheckConstraint(condition=models.Q(weight__gt=0), name="reinforcement_weight_positive")
        ]

    def __str__(self) -> str:
        return f"+{self.weight} {self.reason} → memory {self.memory_id}"
