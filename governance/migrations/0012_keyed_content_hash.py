"""Content hashes become keyed (HMAC of the plain SHA-256, governance.models.memory.keyed_digest): a
tombstone's unsalted SHA-256 confirmed a guessed short text. Hashes are recomputed from the text, and the
stored plain digests of purged memories (whose text is gone) are keyed in place, so dedup, the embedding
check and turn redaction keep matching. Audit events written before this keep the plain digest they
recorded: the chain is append-only and hash-linked, so they cannot be rewritten (docs/governance.md)."""

import hashlib

from django.conf import settings
from django.db import migrations
from django.utils.crypto import salted_hmac

HASH_SALT = "governance.memory.content_hash"  # governance.models.memory.HASH_SALT at the time of writing
BATCH = 5000


def _keyed(plain: str) -> str:
    secret = getattr(settings, "MEMORY_HASH_KEY", "") or settings.SECRET_KEY
    return salted_hmac(HASH_SALT, plain, secret=secret, algorithm="sha256").hexdigest()


def key_hashes(apps, schema_editor):
    Memory = apps.get_model("governance", "Memory")
    connection = schema_editor.connection
    last = 0
    while True:
        rows = list(Memory.objects.filter(pk__gt=last).order_by("pk").values_list(
            "pk", "text", "content_hash", "embedding_hash")[:BATCH])
        if not rows:
            return
        last = rows[-1][0]
        ids = [r[0] for r in rows]
        # From the text where there is one (the same value however often this runs); a purged row's stored
        # digest is keyed as it is. An embedding_hash is the plain digest of the text it was made from.
        content = [
            _keyed(hashlib.sha256(text.encode("utf-8")).hexdigest()) if text else (_keyed(digest) if digest else "")
            for _, text, digest, _ in rows
        ]
        embedded = [_keyed(r[3]) if r[3] else "" for r in rows]
        with connection.cursor() as cur:
            cur.execute(
                "UPDATE governance_memory AS m SET content_hash = v.c, embedding_hash = v.e"
                " FROM unnest(%s::bigint[], %s::text[], %s::text[]) AS v(id, c, e) WHERE m.id = v.id",
                [ids, content, embedded],
            )


class Migration(migrations.Migration):
    dependencies = [("governance", "0011_confirmed_by_a_person")]

    # Irreversible: a keyed digest cannot be turned back into the plain one, and a purged row has no text to
    # hash again; running it twice would key those tombstones twice.
    operations = [migrations.RunPython(key_hashes)]
