"""Dashboard routes. Owned by the dashboard work."""

urlpatterns: list = []
