"""The one way an API view reads its input, body or query string: an Input serializer validates it,
and a bad value is a 400 `invalid_input` with the problems per field (governance/api/errors.py)."""

from __future__ import annotations

from typing import Any

from rest_framework import serializers


def valid(serializer_class: type[serializers.Serializer], data: Any) -> dict:
    """`data` (request.data or request.query_params) validated by `serializer_class`; ValidationError
    (400) otherwise."""
    serializer = serializer_class(data=data)
    serializer.is_valid(raise_exception=True)
    return serializer.validated_data
