"""The API resource `scopes` (its views and serializers: views.py)."""
