"""The API resource `portability` (its views and serializers: views.py)."""
