"""The API resource `events` (its views and serializers: views.py)."""
