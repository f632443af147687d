"""The API resource `administration` (its views and serializers: views.py)."""
