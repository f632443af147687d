"""The API resource `context` (its views and serializers: views.py)."""
