"""Input and Output shapes of recall and context (the packet, its blocks, budget and trace). Inputs validate
only; services do every write."""

from __future__ import annotations

from rest_framework import serializers

from governance.api.memories.serializers import SourceOutput
from governance.recall import STRATEGIES
from governance.recall.handoff import INCLUDES
from governance.recall.pack import DEFAULT_BUDGET_TOKENS
from governance.recall.packet import MAX_BUDGET, MAX_K, MAX_QUERY_CHARS
from governance.runtime.replica import PRIMARY, REPLICA
from governance.services.extraction import REQUIREMENT_TYPES
from governance.summaries.builder import NATURES, SECTIONS


class RecallInput(serializers.Serializer):
    scope = serializers.CharField(max_length=512)
    query = serializers.CharField(max_length=MAX_QUERY_CHARS)
    k = serializers.IntegerField(required=False, min_value=1, max_value=MAX_K, default=10)
    strategy = serializers.ChoiceField(choices=list(STRATEGIES), required=False, default="full")
    as_of = serializers.DateTimeField(required=False)


class ScoresOutput(serializers.Serializer):
    semantic = serializers.FloatField(allow_null=True)
    lexical = serializers.FloatField(allow_null=True)
    activation = serializers.FloatField()
    recency = serializers.FloatField()


class RecallItemOutput(serializers.Serializer):
    memory_id = serializers.IntegerField()
    text = serializers.CharField()
    kind = serializers.CharField()
    key = serializers.CharField(allow_null=True)
    revision = serializers.IntegerField()
    status = serializers.CharField()
    source = SourceOutput()
    score = serializers.FloatField()
    scores = ScoresOutput()


SERVED_BY_HELP = (
    "Which database server answered the read: `replica` (a streaming replica that had replayed every "
    "forget, supersede, retire and grant change of the workspace) or `primary`."
)


class RecallOutput(serializers.Serializer):
    results = RecallItemOutput(many=True)
    served_by = serializers.ChoiceField(choices=[PRIMARY, REPLICA], help_text=SERVED_BY_HELP)


class TaskInput(serializers.Serializer):
    goal = serializers.CharField(max_length=2000)
    state = serializers.CharField(required=False, allow_blank=True, max_length=4000)
    type = serializers.CharField(required=False, allow_blank=True, max_length=100)


class ContextInput(serializers.Serializer):
    scope = serializers.CharField(max_length=512)
    query = serializers.CharField(max_length=MAX_QUERY_CHARS)
    task = TaskInput(required=False)
    budget_tokens = serializers.IntegerField(
        min_value=1,
        max_value=MAX_BUDGET,
        required=False,
        default=DEFAULT_BUDGET_TOKENS,
        help_text=f"The packet's token budget (default {DEFAULT_BUDGET_TOKENS}).",
    )
    strategy = serializers.ChoiceField(choices=list(STRATEGIES), required=False, default="full")
    as_of = serializers.DateTimeField(required=False)
    session = serializers.CharField(required=False, allow_blank=True, max_length=200, default="")
    include = serializers.ListField(
        child=serializers.ChoiceField(choices=list(INCLUDES)),
        required=False,
        default=list,
        max_length=len(INCLUDES),
        help_text="Optional slots: `handoff`, the task scope's six-section hand-off, within the budget.",
    )


class ReplacementOutput(serializers.Serializer):
    memory_id = serializers.IntegerField()
    revision = serializers.IntegerField()
    text = serializers.CharField()
    status = serializers.CharField()


class SessionMemberOutput(serializers.Serializer):
    """A memory named inside another block (its own id: a forget redacts it there too)."""

    memory_id = serializers.IntegerField()
    key = serializers.CharField(allow_null=True)
    revision = serializers.IntegerField()
    status = serializers.CharField()
    text = serializers.CharField()


class SessionCorrectionOutput(SessionMemberOutput):
    session = serializers.CharField()
    turn = serializers.CharField(allow_blank=True, help_text="The ref of the user's turn.")
    told_by = serializers.ChoiceField(
        choices=["agent", "end_user"],
        help_text="agent: an agent's account of the user's words; end_user: a person's token.",
    )


class SessionOverrideOutput(serializers.Serializer):
    session = serializers.CharField()
    turn = serializers.CharField(allow_blank=True)
    told_by = serializers.ChoiceField(choices=["agent", "end_user"])
    since = serializers.DateTimeField(allow_null=True)
    awaiting = serializers.CharField(help_text="confirmation: a person has not decided yet.")
    replaces = SessionMemberOutput(help_text="The rule set aside for this session.")


class SetAsideOutput(serializers.Serializer):
    session = serializers.CharField()
    why = serializers.CharField()
    by = SessionMemberOutput(help_text="The correction in force for this session instead.")


class BindingRequestOutput(SessionCorrectionOutput):
    why = serializers.CharField(help_text="Why no session may set this rule aside.")
    decide = serializers.CharField(help_text="Who must decide: a reviewer.")


class PendingChangeOutput(serializers.Serializer):
    """A change waiting for a reviewer, named on the rule it would change: by id, never its words (they
    were relayed outside this conversation)."""

    memory_id = serializers.IntegerField()
    key = serializers.CharField(allow_null=True)
    revision = serializers.IntegerField()
    status = serializers.CharField()
    told_by = serializers.ChoiceField(choices=["agent", "end_user"])
    why_not_in_force = serializers.CharField(
        allow_blank=True, help_text="Why it is not in force in this session."
    )


class RequirementMemberOutput(serializers.Serializer):
    memory_id = serializers.IntegerField(allow_null=True)
    turn = serializers.CharField(required=False, allow_blank=True)
    text = serializers.CharField(allow_blank=True, allow_null=True)


class SessionRequirementOutput(serializers.Serializer):
    """What the user stated in this session about their task, in force here (docs/governance.md, "The
    session's requirements")."""

    session = serializers.CharField()
    turn = serializers.CharField(allow_blank=True, help_text="The ref of the user's turn.")
    told_by = serializers.ChoiceField(choices=["agent", "end_user"])
    since = serializers.DateTimeField(allow_null=True)
    type = serializers.ChoiceField(choices=REQUIREMENT_TYPES, allow_null=True)
    status = serializers.CharField()
    awaiting = serializers.CharField(
        help_text="'a reviewer': it would last beyond the session and waits in the review queue; "
        "'this session only' otherwise."
    )
    replaces = RequirementMemberOutput(
        required=False, help_text="The user's earlier requirement it replaced."
    )
    ambiguous = RequirementMemberOutput(
        many=True, required=False, help_text="A correction that could replace any of these: not guessed."
    )
    correction_rejected = RequirementMemberOutput(
        required=False, help_text="A correction of it a reviewer rejected: it is in force again."
    )


class DigestOutput(serializers.Serializer):
    memory_id = serializers.IntegerField(help_text="Read the whole text with GET /api/v1/memories/{id}.")
    chars = serializers.IntegerField(help_text="The whole text's length.")
    call_id = serializers.CharField(required=False)
    turn = serializers.CharField(required=False)


class MemberOutput(serializers.Serializer):
    memory_id = serializers.IntegerField()
    text = serializers.CharField(allow_blank=True)


class InDisputeOutput(serializers.Serializer):
    """A proposed contradiction no person has decided (governance/recall/disputes.py)."""

    dispute_id = serializers.IntegerField()
    with_ = MemberOutput(help_text="The other memory of the dispute.")
    newer = serializers.IntegerField(help_text="Which of the two was said later.")
    state = serializers.CharField()
    reason = serializers.CharField(allow_blank=True)


InDisputeOutput._declared_fields["with"] = InDisputeOutput._declared_fields.pop("with_")


class PartOfOutput(serializers.Serializer):
    memory_id = serializers.IntegerField()
    text = serializers.CharField(help_text="The whole requirement or rule this block is part of.")
    part = serializers.ChoiceField(
        choices=["in force", "set aside"],
        help_text="In force: the clauses no later requirement replaced (constraints); set aside: those one did "
        "(negative context). The same memory gives one block of each.",
    )


class BlockOutput(serializers.Serializer):
    memory_id = serializers.IntegerField(allow_null=True)
    kind = serializers.CharField()
    key = serializers.CharField(allow_null=True)
    revision = serializers.IntegerField(allow_null=True)
    status = serializers.CharField()
    text = serializers.CharField(allow_blank=True)
    source = SourceOutput()
    score = serializers.FloatField()
    reason = serializers.CharField()
    # Present only where they apply:
    role = serializers.CharField(required=False, help_text="The speaker of a recorded turn.")
    call_id = serializers.CharField(
        required=False, help_text="Ties a tool call to its result; they travel together."
    )
    session = serializers.CharField(required=False)
    said_by = serializers.ChoiceField(
        choices=["user", "assistant", "tool", "person", "document", "model", "summary"],
        required=False,
        help_text="Who said what the block holds: the user, the assistant, a tool, a person of the workspace "
        "(a reviewer's note), an external document, a model's inference, a summary.",
    )
    speaker = serializers.CharField(required=False, help_text="The speaker's name, when the turn has one.")
    digest = DigestOutput(
        required=False,
        help_text="The text is a digest of a long tool result or reply: how long the whole is and where it is.",
    )
    flags = serializers.ListField(
        child=serializers.CharField(),
        required=False,
        help_text="Contradictions: 'contradicts <id>', 'loses to <id>: <why>'.",
    )
    replaced_by = ReplacementOutput(
        required=False, allow_null=True, help_text="Negative context: the memory now in force instead."
    )
    supported_by = serializers.ListField(child=serializers.IntegerField(), required=False)
    in_dispute = InDisputeOutput(
        required=False, help_text="Both sides stay evidence until a person decides; the newer one is named."
    )
    supports = serializers.IntegerField(required=False)
    # Session overrides (docs/governance.md): a user's correction in force for this session, the rule it
    # set aside there, and what a rule that holds says about this session's or another's correction.
    session_override = SessionOverrideOutput(required=False, help_text="In force for this session only.")
    set_aside = SetAsideOutput(required=False, help_text="Negative context: set aside for this session only.")
    binding_request = BindingRequestOutput(
        required=False, help_text="The user asked to change a binding rule."
    )
    override_rejected = SessionCorrectionOutput(
        required=False, help_text="This session's correction was rejected: the rule again."
    )
    pending_changes = PendingChangeOutput(
        many=True, required=False, help_text="Changes waiting for a reviewer."
    )
    pending_more = serializers.IntegerField(required=False, help_text="How many more wait.")
    session_requirement = SessionRequirementOutput(
        required=False, help_text="The user's requirement in this session, in force here (constraints)."
    )
    replaced_in_session = serializers.ListField(
        child=serializers.IntegerField(),
        required=False,
        help_text="A recent turn whose requirements the user replaced later in this session (their ids).",
    )
    part_of = PartOfOutput(
        required=False,
        help_text="A requirement or rule a later one replaced in part (docs/governance.md, 'Part of a "
        "requirement'): this block holds one part of it.",
    )


class SkippedOutput(BlockOutput):
    slot = serializers.CharField()
    tokens = serializers.IntegerField(required=False, help_text="What the block would have cost.")


class HandoffBlockOutput(BlockOutput):
    """A line of the hand-off (recall/handoff.py)."""

    replaced_by = MemberOutput(required=False, help_text="A corrected requirement: what replaced it.")
    memory_ids = serializers.ListField(
        child=serializers.IntegerField(), help_text="Every memory the line cites."
    )
    section = serializers.ChoiceField(choices=list(SECTIONS))
    nature = serializers.ChoiceField(
        choices=list(NATURES),
        help_text="What the line is: fact (a tool observed it), guess, proposal (awaiting a person), "
        "authorisation (confirmed by a person), request, pending (a call waiting for its result), void.",
    )


class PacketOutput(serializers.Serializer):
    task = BlockOutput(many=True)
    handoff = HandoffBlockOutput(many=True, required=False, help_text="Only when `include` names it.")
    constraints = BlockOutput(many=True)
    recent = BlockOutput(many=True)
    evidence = BlockOutput(many=True)
    preferences = BlockOutput(many=True)
    relations = BlockOutput(many=True)
    external = BlockOutput(many=True)
    negative = BlockOutput(many=True)
    skipped = SkippedOutput(many=True)


class BudgetOutput(serializers.Serializer):
    limit = serializers.IntegerField()
    used = serializers.IntegerField()
    counter = serializers.CharField()


class StageOutput(serializers.Serializer):
    name = serializers.CharField()
    ms = serializers.FloatField()


class TraceOutput(serializers.Serializer):
    stages = StageOutput(many=True)
    pending_vectors = serializers.IntegerField(
        help_text="Eligible memories still waiting for their vector (found by keyword meanwhile); capped at 10,000."
    )
    counts = serializers.DictField(
        child=serializers.DictField(),
        required=False,
        help_text="Per stage, what its in/out counts are made of, so they add up from stage to stage: `unit` when "
        "they are not memories (scopes, the query), `from` {stage: n} when what came in came from several "
        "stages, and how many it left out without naming each (found_twice, collapsed, cut, "
        "to_negative, not_placed, over_budget, …).",
    )


class ContextOutput(serializers.Serializer):
    turn_id = serializers.IntegerField(allow_null=True)
    packet = PacketOutput()
    budget = BudgetOutput()
    trace = TraceOutput()
    text = serializers.CharField(allow_blank=True)
    served_by = serializers.ChoiceField(choices=[PRIMARY, REPLICA], help_text=SERVED_BY_HELP)


class PinnedOverBudgetOutput(serializers.Serializer):
    """422: `pinned_over_budget` (the pinned blocks alone need more than the budget: `needed`, `budget`), or,
    like every write, `idempotency_key_reused` (an Idempotency-Key sent again with another request)."""

    error = serializers.CharField()
    message = serializers.CharField()
    needed = serializers.IntegerField(
        required=False, help_text="pinned_over_budget: what the pinned blocks need."
    )
    budget = serializers.IntegerField(required=False, help_text="pinned_over_budget: the request's budget.")
