"""The API resource `operations` (its views and serializers: views.py)."""
