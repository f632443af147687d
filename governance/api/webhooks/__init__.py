"""The API resource `webhooks` (its views and serializers: views.py)."""
