"""The API resource `access` (its views and serializers: views.py)."""
