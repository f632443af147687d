"""The dashboard's conventions, checked so a new page follows them, as tests/governance/api/test_api_layout.py
does for the API: a view reads request input only through a Django form (`SomeForm(request.POST)`, then
`form.cleaned_data`), never value by value from request.GET / request.POST / request.FILES; and every form
class in memoryui/forms/ is a django.forms.Form or ModelForm named <Thing>Form."""

from __future__ import annotations

import ast
import importlib
import inspect
import pkgutil
from pathlib import Path

from django import forms

import memoryui.views

VIEWS_DIR = Path(memoryui.views.__file__).parent
FORMS_DIR = VIEWS_DIR.parent / "forms"
REQUEST_DATA = {"GET", "POST", "FILES"}
# Whole-query-string operations that carry the page's filters onto a link (a next page, a sort order)
# without reading a value: `request.GET.copy()` and `request.GET.urlencode()`. What is read from such a
# copy (`params.get(...)`, `params["x"]`) still counts as a value read by hand.
WHOLE_QUERY = {"copy", "urlencode"}
READS = {"get", "getlist", "lists", "items", "values", "keys", "dict", "__getitem__"}


def _is_request_data(node: ast.AST) -> bool:
    return isinstance(node, ast.Attribute) and node.attr in REQUEST_DATA


def _call_name(call: ast.Call) -> str:
    func = call.func
    return func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""


def _by_hand(tree: ast.AST) -> tuple[list[ast.Attribute], set[str]]:
    """The request-data nodes not handed whole to a form nor copied whole onto a link, and the names
    such copies are bound to."""
    parents = {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
    found: list[ast.Attribute] = []
    copies: set[str] = set()
    for node in ast.walk(tree):
        if not _is_request_data(node):
            continue
        parent = parents.get(node)
        if isinstance(parent, ast.keyword):
            parent = parents.get(parent)
        if isinstance(parent, ast.Call) and node is not parent.func and _call_name(parent).endswith("Form"):
            continue  # SomeForm(request.POST), SomeForm(data=request.GET), SomeForm(request.POST, request.FILES)
        if isinstance(parent, ast.Attribute) and parent.attr in WHOLE_QUERY:
            assign = parents.get(parents.get(parent))
            if isinstance(assign, ast.Assign):
                copies.update(t.id for t in assign.targets if isinstance(t, ast.Name))
            continue
        found.append(node)
    return found, copies


def hand_reads(source: str) -> list[tuple[int, str]]:
    """Every place a module touches request data other than by handing it whole to a form (line, what);
    and every value read from a copy of it."""
    tree = ast.parse(source)
    nodes, aliases = _by_hand(tree)
    found = [(node.lineno, f"{ast.unparse(node)} read by hand") for node in nodes]
    for node in ast.walk(tree):
        target = None
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in READS:
            target = node.func.value
        elif isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Load):
            target = node.value
        if isinstance(target, ast.Name) and target.id in aliases:
            found.append((node.lineno, f"{ast.unparse(node)} read from a copy of the query"))
    return sorted(found)


def value_reads(source: str) -> int:
    """How many request values a module reads one by one: each .get / .getlist / [...] / `in` on request
    data, on a name bound to it (`post = request.POST`) or on a copy of it. The figure issue 51 counts."""
    tree = ast.parse(source)
    hand, copies = _by_hand(tree)
    bound = set(copies)
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and any(n in hand for n in ast.walk(node.value)):
            bound.update(t.id for t in node.targets if isinstance(t, ast.Name))

    def is_data(node: ast.AST) -> bool:
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "copy":
            node = node.func.value
        return _is_request_data(node) or (isinstance(node, ast.Name) and node.id in bound)

    count = 0
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            count += node.func.attr in ("get", "getlist") and is_data(node.func.value)
        elif isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Load):
            count += is_data(node.value)
        elif isinstance(node, ast.Compare):
            count += any(isinstance(op, ast.In | ast.NotIn) for op in node.ops) and any(
                is_data(c) for c in node.comparators
            )
    return count


def _view_modules() -> list[Path]:
    return sorted(p for p in VIEWS_DIR.glob("*.py") if p.name != "__init__.py")


def test_views_read_request_input_only_through_forms():
    offenders = []
    for path in _view_modules():
        offenders += [f"{path.name}:{line}: {what}" for line, what in hand_reads(path.read_text())]
    assert len(_view_modules()) > 20  # the walk found the page modules
    assert offenders == []


def _form_modules():
    import memoryui.forms

    for info in pkgutil.walk_packages(memoryui.forms.__path__, "memoryui.forms."):
        yield importlib.import_module(info.name)


def test_every_dashboard_form_is_a_django_form_named_form():
    classes = [
        cls
        for module in _form_modules()
        for cls in vars(module).values()
        if inspect.isclass(cls) and cls.__module__ == module.__name__
    ]
    forms_found = [c for c in classes if issubclass(c, forms.BaseForm)]
    assert len(forms_found) >= 15  # one per converted action: governance, curation, webhooks, ...
    wrong = [
        f"{c.__module__}.{c.__name__}"
        for c in forms_found
        if not issubclass(c, forms.Form | forms.ModelForm) or not c.__name__.endswith("Form")
    ]
    assert wrong == []
    # A module of forms holds forms (and the fields and widgets they use), nothing else that is a class.
    others = [
        f"{c.__module__}.{c.__name__}"
        for c in classes
        if not issubclass(c, forms.BaseForm | forms.Field | forms.Widget)
    ]
    assert others == []


def test_the_forms_package_marker_is_empty():
    assert (FORMS_DIR / "__init__.py").read_text() == ""


def test_the_walker_tells_a_form_from_a_hand_read():
    clean = "def v(request):\n    form = ThingForm(request.POST, request.FILES)\n    f = X.Form(data=request.GET)\n"
    assert hand_reads(clean) == []
    by_hand = (
        "def v(request):\n"
        "    a = request.POST.get('a')\n"
        "    b = request.GET['b']\n"
        "    c = request.GET.getlist('c')\n"
        "    data = request.POST if request.method == 'POST' else request.GET\n"
        "    params = request.GET.copy()\n"
        "    d = params.get('d')\n"
        "    params['page'] = 2\n"
        "    e = thing(request.POST)\n"
    )
    assert [line for line, _ in hand_reads(by_hand)] == [2, 3, 4, 5, 5, 7, 9]
    assert value_reads(by_hand) == 4  # a, b, c and d: the alias `data` reads nothing yet


def test_hand_read_figure():
    """Issue 51's figure, printed: request values the views read one by one. 158 before the rework; 138
    with the memory list, the disputes and the role-fitting pages merged; 79 once the governance,
    curation, webhooks, portability, theme, summary, graph and memory-action pages and the focused scope
    read theirs through forms too; 74 with the turn pages merged; 0 once administration, evaluation, the
    memory list's cursors and reach, the scope picker, the review queue and its disputes, the timeline, the
    tombstone and the turn search read theirs through forms as well."""
    per_module = {p.name: value_reads(p.read_text()) for p in _view_modules()}
    print("request values read by hand:", sum(per_module.values()), per_module)
    assert sum(per_module.values()) == 0
