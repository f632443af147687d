"""The API resource `relations` (its views and serializers: views.py)."""
