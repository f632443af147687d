"""The API package's conventions, checked so a new operation follows them: every resource is a package
laid out the same way (serializers.py beside views.py, no serializer defined in a views module),
serializers are named <Thing>Input or <Thing>Output, views read input only through governance.api.validation.valid, and every
route counts in the rate bucket meant for it (governance/api/limits.py)."""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import re
from pathlib import Path

from django.test import RequestFactory
from rest_framework import serializers

import governance.api
from governance.api.limits import throttle_bucket
from governance.api.urls import urlpatterns

API_DIR = Path(governance.api.__file__).parent


def _api_modules():
    for info in pkgutil.walk_packages(governance.api.__path__, "governance.api."):
        yield importlib.import_module(info.name)


def test_every_api_serializer_is_named_input_or_output():
    names = {
        cls.__name__
        for module in _api_modules()
        for cls in vars(module).values()
        if inspect.isclass(cls)
        and issubclass(cls, serializers.Serializer)
        and cls.__module__ == module.__name__
    }
    assert len(names) > 30  # the walk found the resource modules
    assert sorted(n for n in names if not n.endswith(("Input", "Output")) and n != "ErrorBody") == []


def test_every_resource_keeps_its_serializers_beside_its_views():
    resources = sorted(p.parent.name for p in API_DIR.glob("*/views.py"))
    assert len(resources) >= 13  # memories, context, administration, webhooks, …
    assert [r for r in resources if not (API_DIR / r / "serializers.py").exists()] == []
    in_views = [
        f"{module.__name__}.{cls.__name__}"
        for module in _api_modules()
        if module.__name__.endswith(".views")
        for cls in vars(module).values()
        if inspect.isclass(cls)
        and issubclass(cls, serializers.Field)  # a Serializer is a Field too
        and cls.__module__ == module.__name__
    ]
    assert in_views == []


def test_views_read_request_input_only_through_the_validation_helper():
    offenders = []
    for path in sorted(API_DIR.rglob("*.py")):
        if path.name == "validation.py":
            continue
        source = path.read_text()
        if "is_valid(" in source:
            offenders.append(f"{path.name}: is_valid")
        for match in re.finditer(r"request\.(data|query_params)\b", source):
            before = source[max(0, match.start() - 60) : match.start()]
            if not re.search(r"valid\([\w.]+, $", before):
                offenders.append(f"{path.name}: {match.group(0)} read by hand")
    assert offenders == []


def _routes():
    for pattern in urlpatterns:
        view = getattr(pattern.callback, "view_class", None)
        if view is not None and pattern.name not in ("api-schema", "api-docs"):
            yield pattern.name, view


def test_each_route_counts_in_the_rate_bucket_meant_for_it():
    factory = RequestFactory()
    seen = {}
    for name, view_class in _routes():
        for method in ("get", "post", "put", "delete"):
            if hasattr(view_class, method):
                request = getattr(factory, method)("/")
                seen[(name, method)] = throttle_bucket(request, view_class())
    expected = {}
    for name, method in seen:
        if name.startswith("api-gov-"):
            expected[(name, method)] = "governance"
        elif name in ("api-recall", "api-context"):
            expected[(name, method)] = "context"
        else:
            expected[(name, method)] = "read" if method == "get" else "write"
    assert (
        len(seen) == 55
    )  # every operation of the API (28, 12 of administration, 7 of webhooks, 3 of curation, 2 of portability, 3 of disputes)
    assert seen == expected
