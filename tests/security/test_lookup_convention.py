"""Issue 26 (resolvers) and issue 20 (workspace walls): every name or id that comes from a request is turned
into an object by one resolver per kind in governance.permissions.resolve, which answers as for an unknown
object when it is not the caller's. This test reads the views, API views, serializers, management
commands and the import, and fails on a hand-written lookup of request input there:

- `get_object_or_404(...)` / `get_list_or_404(...)`;
- `<Model>.objects…get/filter/exclude(<identity>=<value>)` on a model a request names (scope, principal,
  memory, turn, workspace, grant, token, …) where <identity> is an id, path, name or slug and <value> is
  not a literal and not an attribute of an object already in hand (`pk=scope.pk` re-reads a resolved
  object; `pk=scope_id` or `path=data["parent"]` is request input).

The development tools (the `devtools` app: benchmarks, the demo loader, the stack runner) are not request
paths and are left out, as are `bench_*` commands wherever they live."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = [
    "governance/api",
    "memoryui/views",
    "governance/management/commands",
    "governance/services/portability",
]
LOOKUP_MODELS = {
    "Scope",
    "Principal",
    "Memory",
    "Turn",
    "Workspace",
    "Grant",
    "ApiToken",
    "Invitation",
    "Outbox",
    "EvaluationRun",
    "WebhookSubscription",
    "WebhookDelivery",
    "Relation",
    "User",
}
IDENTITY = {"pk", "id", "path", "name", "slug", "username", "key_hash", "prefix"}
METHODS = {"get", "filter", "exclude", "get_or_create"}


def _files() -> list[Path]:
    out = []
    for package in PACKAGES:
        assert (ROOT / package).is_dir(), f"{package} moved: point the convention test at its new home"
        for path in sorted((ROOT / package).rglob("*.py")):
            if not path.name.startswith("bench_"):
                out.append(path)
    return out


def _model_of(node: ast.AST) -> str | None:
    """The model name at the root of `Model.objects.<…>.method`, if the chain starts there."""
    while isinstance(node, ast.Call | ast.Attribute):
        node = node.func if isinstance(node, ast.Call) else node.value
        if isinstance(node, ast.Attribute) and node.attr == "objects" and isinstance(node.value, ast.Name):
            return node.value.id
    return None


def _identity_key(keyword: str) -> bool:
    last = keyword.split("__")[-1]
    return keyword in IDENTITY or (last in IDENTITY and keyword.count("__") == 0)


def hand_written_lookups(source: str, filename: str = "<source>") -> list[str]:
    """`file:line what` for each hand-written lookup of request input in `source`."""
    found = []
    for node in ast.walk(ast.parse(source, filename)):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
        if name in ("get_object_or_404", "get_list_or_404"):
            found.append(f"{filename}:{node.lineno} {name}")
            continue
        if not isinstance(func, ast.Attribute) or func.attr not in METHODS:
            continue
        model = (
            _model_of(func.value)
            if not (isinstance(func.value, ast.Attribute) and func.value.attr == "objects")
            else (func.value.value.id if isinstance(func.value.value, ast.Name) else None)
        )
        if model not in LOOKUP_MODELS:
            continue
        for kw in node.keywords:
            if kw.arg and _identity_key(kw.arg) and not isinstance(kw.value, ast.Constant | ast.Attribute):
                found.append(f"{filename}:{node.lineno} {model}.objects….{func.attr}({kw.arg}=…)")
    return found


def test_views_serializers_and_commands_resolve_request_input_through_the_resolvers():
    offenders = []
    for path in _files():
        offenders += hand_written_lookups(path.read_text(), str(path.relative_to(ROOT)))
    assert offenders == [], (
        "Use governance.permissions.resolve (scope_by_path, scope_by_id, principal_by_name, "
        "team_by_name, memory_for_reader, turn_for_reader, grant_for_reader, "
        "workspace_by_slug) instead of:\n" + "\n".join(offenders)
    )


def test_the_check_catches_a_hand_written_lookup():
    """The check itself can fail: each shape the convention forbids is found, an allowed one is not."""
    forbidden = '''
def view(request, scope_id, slug):
    a = Scope.objects.filter(pk=scope_id).first()
    b = Scope.objects.select_related("workspace").filter(path=request.POST["parent"].strip()).first()
    c = Principal.objects.get(name=data["principal"])
    d = get_object_or_404(Memory, pk=memory_id)
    e = Workspace.objects.filter(slug=slug).first()
'''
    allowed = '''
def view(request, scope):
    a = Scope.objects.select_related("parent").get(pk=scope.pk)
    b = Scope.objects.filter(path="tuning/proj").exists()
    c = Memory.objects.filter(scope=scope).count()
'''
    assert len(hand_written_lookups(forbidden)) == 5
    assert hand_written_lookups(allowed) == []
