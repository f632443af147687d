"""Invariants PostgreSQL holds for us: allowed status transitions (no resurrection), no active write of
an older revision, an append-only audit log, and the indexes for scope trees and lexical search."""

from django.db import migrations

TRANSITIONS_SQL = """
CREATE OR REPLACE FUNCTION governance_memory_transition() RETURNS trigger AS $$
BEGIN
    IF NEW.status = OLD.status THEN
        RETURN NEW;
    END IF;
    IF NOT (
        (OLD.status = 'candidate'  AND NEW.status IN ('proposed','active','rejected','retired','forgotten')) OR
        (OLD.status = 'proposed'   AND NEW.status IN ('active','rejected','retired','forgotten')) OR
        (OLD.status = 'active'     AND NEW.status IN ('superseded','retired','forgotten')) OR
        (OLD.status = 'superseded' AND NEW.status IN ('retired','forgotten')) OR
        (OLD.status = 'retired'    AND NEW.status IN ('forgotten')) OR
        (OLD.status = 'rejected'   AND NEW.status IN ('forgotten'))
    ) THEN
        RAISE EXCEPTION 'memory % cannot go from % to %', OLD.id, OLD.status, NEW.status
            USING ERRCODE = 'check_violation', CONSTRAINT = 'memory_status_transition';
    END IF;
    RETURN NEW;
END $$ LANGUAGE plpgsql;

CREATE TRIGGER memory_status_transition BEFORE UPDATE OF status ON governance_memory
    FOR EACH ROW EXECUTE FUNCTION governance_memory_transition();

CREATE OR REPLACE FUNCTION governance_memory_no_resurrection() RETURNS trigger AS $$
BEGIN
    IF NEW.key IS NOT NULL AND NEW.status = 'active' AND EXISTS (
        SELECT 1 FROM governance_memory m
        WHERE m.scope_id = NEW.scope_id AND m.key = NEW.key AND m.revision > NEW.revision
          AND m.id <> NEW.id
    ) THEN
        RAISE EXCEPTION 'revision % of % is older than a later revision and cannot become active',
            NEW.revision, NEW.key
            USING ERRCODE = 'check_violation', CONSTRAINT = 'memory_no_resurrection';
    END IF;
    RETURN NEW;
END $$ LANGUAGE plpgsql;

CREATE TRIGGER memory_no_resurrection BEFORE INSERT OR UPDATE OF status ON governance_memory
    FOR EACH ROW EXECUTE FUNCTION governance_memory_no_resurrection();

CREATE OR REPLACE FUNCTION governance_audit_append_only() RETURNS trigger AS $$
BEGIN
    RAISE EXCEPTION 'the audit log is append-only' USING ERRCODE = 'insufficient_privilege';
END $$ LANGUAGE plpgsql;

CREATE TRIGGER audit_append_only BEFORE UPDATE OR DELETE ON governance_auditevent
    FOR EACH ROW EXECUTE FUNCTION governance_audit_append_only();

CREATE INDEX scope_tree_gist ON governance_scope USING gist (tree);
CREATE INDEX memory_lexical_fts ON governance_memory USING gin (to_tsvector('simple', lexical));
CREATE INDEX memory_text_trgm ON governance_memory USING gin (lexical gin_trgm_ops);
"""

REVERSE_SQL = """
DROP TRIGGER IF EXISTS memory_status_transition ON governance_memory;
DROP FUNCTION IF EXISTS governance_memory_transition();
DROP TRIGGER IF EXISTS memory_no_resurrection ON governance_memory;
DROP FUNCTION IF EXISTS governance_memory_no_resurrection();
DROP TRIGGER IF EXISTS audit_append_only ON governance_auditevent;
DROP FUNCTION IF EXISTS governance_audit_append_only();
DROP INDEX IF EXISTS scope_tree_gist;
DROP INDEX IF EXISTS memory_lexical_fts;
DROP INDEX IF EXISTS memory_text_trgm;
"""


class Migration(migrations.Migration):
    dependencies = [("governance", "0001_initial")]
    operations = [migrations.RunSQL(TRANSITIONS_SQL, REVERSE_SQL)]
