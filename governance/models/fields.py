from django.db import models


class LtreeField(models.Field):
    """PostgreSQL ltree (the scope path of ids, e.g. "1.4.9"); the `ltree` extension is installed by 0001."""

    description = "PostgreSQL ltree label path"

    def db_type(self, connection):
        return "ltree"

    def from_db_value(self, value, expression, connection):
        return value

    def to_python(self, value):
        return value if value is None else str(value)

    def get_prep_value(self, value):
        return value if value is None else str(value)


class Ancestors(models.Lookup):
    """`tree__ancestor_of=path`: rows whose path is an ancestor of (or equal to) the given path."""

    lookup_name = "ancestor_of"

    def as_sql(self, compiler, connection):
        lhs, lhs_params = self.process_lhs(compiler, connection)
        rhs, rhs_params = self.process_rhs(compiler, connection)
        return f"{lhs} @> {rhs}::ltree", lhs_params + rhs_params


class Descendants(models.Lookup):
    """`tree__descendant_of=path`: rows whose path is below (or equal to) the given path."""

    lookup_name = "descendant_of"

    def as_sql(self, compiler, connection):
        lhs, lhs_params = self.process_lhs(compiler, connection)
        rhs, rhs_params = self.process_rhs(compiler, connection)
        return f"{lhs} <@ {rhs}::ltree", lhs_params + rhs_params


LtreeField.register_lookup(Ancestors)
LtreeField.register_lookup(Descendants)
