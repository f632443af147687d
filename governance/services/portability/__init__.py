"""Taking a scope subtree out of one installation and into another (docs/portability.md).

`export` streams a subtree as JSON lines; `format` says what each line holds and checks it; `import_` reads
such a file into a scope of this installation in one transaction, ids remapped, invariants checked."""

from governance.services.portability.export import scope_export, scope_export_lines  # noqa: F401
from governance.services.portability.format import FORMAT_NAME, FORMAT_VERSION, ImportFileError  # noqa: F401
from governance.services.portability.import_ import ImportResult, scope_import  # noqa: F401
