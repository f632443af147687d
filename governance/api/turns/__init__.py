"""The API resource `turns` (its views and serializers: views.py)."""
