"""Every change of domain state: keyword-only, the acting principal passed in, one transaction,
one audit event and the outbox row for propagation in that same transaction."""
