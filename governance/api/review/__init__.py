"""The API resource `review` (its views and serializers: views.py)."""
