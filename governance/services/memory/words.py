"""Forgetting follows the words, not only the row: where a memory's text went, and taking it out there.

A memory's words reach more places than its own row. The main way text enters the service is an agent
relaying a user's turn: the turn is stored as an episode and the extractor stores each rule-like sentence
of it as a candidate `derived_from` that episode, so the sentence lives on in the episode (its text,
keyword terms, vector and sentence passages), in every stored packet that quoted the episode, in a
relation's reason, in the summaries and caches built from them. Forgetting the candidate while the
episode keeps the sentence forgets nothing.

`words_forget` runs in the forget's transaction, while the text is still known (a hard forget keeps it
nowhere after), and reaches, within what the forgetting person governs (`permissions.forget_reach`):
- the memories the forgotten one was read from (`derived_from` targets): the sentence is replaced by
  REDACTED, their keyword terms and content hash follow the new text, their vector and passages are
  dropped now and made again by the embedding worker (the same outbox event names them);
- the memories read from the forgotten one in its own words (the sentences extracted from a forgotten
  turn) that no person decided yet: returned for `memory_forget` to forget the same way; a decided one
  stays (a person put it in force or ended it) and is named in the report; one read from it in words of
  its own (a promotion's rule) is not where its words went;
- the stored turns of the subtree (live and archived) that asked with the text, or quote a turn it was
  read from, inside a longer string too (`propagation.turns.redact_said_text`);
- the misses the workspace's evaluation runs kept (question, gold answer, quoted turns) and the questions
  their results list (`propagation.misses.redact_misses_said_text`);
- the reasons of the relations of these memories (a hard forget blanks the forgotten memory's own);
- the summaries citing any of them, marked stale so no read serves the old text.

What it returns is the forget's report (`places`): each place with its state, never the text."""

from __future__ import annotations

from dataclasses import dataclass, field

from django.db.models import Q

from governance.models import Memory, Principal, Relation, RelationKind, Status, content_hash, lexical
from governance.permissions import Action, can, forget_reach
from governance.propagation.misses import redact_misses_said_text
from governance.propagation.turns import MIN_FAST_TEXT, REDACTED, redact_said_text
from governance.services.audit import AuditEntry, audit_record
from governance.services.summary import summaries_mark_stale

# On a memory whose text lost a forgotten memory's words: the ids of those memories.
WORDS_FORGOTTEN = "words_forgotten"
# Meta of a purged memory that may hold its words (a requirement's values and stage facts).
TEXT_META = ("requirement",)
UNDECIDED = (Status.CANDIDATE, Status.PROPOSED)
# The sentences of a long text looked for one by one (a pasted document's first ones).
MAX_SENTENCES = 48


@dataclass
class WordsReached:
    places: list[dict] = field(default_factory=list)
    rewritten: list[int] = field(default_factory=list)  # memories whose text changed: embed again
    derived: list[int] = field(default_factory=list)  # undecided memories read from it: forget them too


def words_forget(memory: Memory, actor: Principal | None, *, hard: bool) -> WordsReached:
    """Take `memory`'s words out of every place they went (see the module). Call in the forget's
    transaction, before a hard forget blanks the text."""
    reached = WordsReached()
    text = memory.text
    if not text or not text.strip():
        return reached
    action = Action.FORGET_HARD if hard else Action.FORGET_SOFT
    links = Relation.objects.filter(kind=RelationKind.DERIVED_FROM).filter(
        Q(source_id=memory.pk) | Q(target_id=memory.pk)
    )
    holder_scopes = set()  # the scopes of the turns its words were taken from (normally its own)
    for link in links.select_related("source__scope", "target__scope"):
        other = link.target if link.source_id == memory.pk else link.source
        if other.status == Status.FORGOTTEN or other.purged_at is not None:
            continue
        if not can(actor, other.scope, action):
            reached.places.append(_place(other, "not_governed"))
        elif link.source_id == memory.pk:  # the memory was read from `other`: its words are in it
            state = "rewritten" if _rewrite(other, text, memory, actor) else "not_found"
            if state == "rewritten":
                reached.rewritten.append(other.pk)
                holder_scopes.add(other.scope)
            reached.places.append(_place(other, state))
        elif not other.text or other.text not in text:
            continue  # read from it in words of its own (a promotion's rule, a model's summary)
        elif other.status in UNDECIDED:  # its words, awaiting a person: forgotten with it
            reached.derived.append(other.pk)
            reached.places.append(_place(other, "forgotten"))
        else:
            reached.places.append(_place(other, "kept_decided"))
    ids = [memory.pk, *reached.rewritten]
    # What could have seen the words: the memory's subtree and each rewritten turn's, as far as the
    # person governs them.
    scopes = sorted({pk for scope in {memory.scope, *holder_scopes} for pk in forget_reach(actor, scope)})
    # The text, and each sentence of a longer one (a turn's sentence asked or quoted on its own).
    pieces = [text, *(s for s in lexical.sentences(text)[:MAX_SENTENCES] if len(s) >= MIN_FAST_TEXT)]
    # The packets of turns citing the memory itself are the workers' after a hard forget (its blocks by
    # id, `propagation.turns.redact_turns`) and masked by every read after a soft one; those quoting a
    # turn its words were taken from are rewritten here, as nothing else knows the words are in them.
    turns = redact_said_text(scope_ids=scopes, texts=pieces, cited_ids=reached.rewritten)
    reached.places.append({"place": "turns", "state": "rewritten", "count": turns})
    # The misses evaluation runs of the workspace kept (their question, answer and quoted turns) are read
    # by anyone of the workspace: the words go there whatever scope of it the memory is in.
    misses = redact_misses_said_text(
        workspace_id=memory.scope.workspace_id, texts=pieces, hashes=[memory.content_hash]
    )
    reached.places.append({"place": "evaluation_misses", "state": "rewritten", "count": misses})
    reached.places.append(
        {"place": "relations", "state": "rewritten", "count": _reasons(memory, text, ids, hard)}
    )
    stale = summaries_mark_stale(memory_ids=ids, reason="a memory's words were forgotten")
    reached.places.append({"place": "summaries", "state": "stale", "count": stale})
    return reached


def purged_meta(meta: dict) -> dict:
    """A purged memory's meta without what may hold its words."""
    return {k: v for k, v in (meta or {}).items() if k not in TEXT_META}


def _place(memory: Memory, state: str) -> dict:
    return {"place": "memory", "memory_id": memory.pk, "scope": memory.scope.path, "state": state}


def _rewrite(holder: Memory, text: str, forgotten: Memory, actor: Principal | None) -> bool:
    """Replace `text` in the holder's text; its keyword terms, hash, vector and passages follow. False when
    the words are not there verbatim (a model's paraphrase): the report says so, the holder is unchanged."""
    new = holder.text.replace(text, REDACTED)
    if new == holder.text:
        return False
    holder.text = new
    if not holder.meta.get("small_talk"):
        holder.lexical = lexical.lexical_text(new, holder.speaker or "")
    holder.content_hash = content_hash(new)
    holder.embedding, holder.embedding_hash = None, ""
    holder.meta = {
        **holder.meta,
        WORDS_FORGOTTEN: sorted({*holder.meta.get(WORDS_FORGOTTEN, []), forgotten.pk}),
    }
    holder.save(update_fields=["text", "lexical", "content_hash", "embedding", "embedding_hash", "meta"])
    holder.passages.all().delete()
    audit_record(
        actor=actor,
        entry=AuditEntry(
            "memory.words_forgotten",
            "memory",
            str(holder.pk),
            holder.scope.path,
            holder.status,
            holder.status,
            f"memory {forgotten.pk} read from it was forgotten",
            {"forgotten": forgotten.pk},
        ),
    )
    return True


def _reasons(memory: Memory, text: str, ids: list[int], hard: bool) -> int:
    """Relations of these memories whose reason quotes the words lose them; a hard forget blanks every
    reason written on the forgotten memory's own links (a reason is about its two ends)."""
    count = 0
    relations = Relation.objects.filter(Q(source_id__in=ids) | Q(target_id__in=ids)).exclude(reason="")
    for relation in relations.only("pk", "reason", "source_id", "target_id"):
        own = memory.pk in (relation.source_id, relation.target_id)
        reason = REDACTED if hard and own else relation.reason.replace(text, REDACTED)
        if reason != relation.reason:
            Relation.objects.filter(pk=relation.pk).update(reason=reason)
            count += 1
    return count
