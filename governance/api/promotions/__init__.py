"""The API resource `promotions` (its views and serializers: views.py)."""
