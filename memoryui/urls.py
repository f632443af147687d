from django.urls import include, path

from memoryui.ops import health, metrics

urlpatterns = [
    path("healthz", health.healthz, name="healthz"),
    path("readyz", health.readyz, name="readyz"),
    path("metrics", metrics.metrics, name="metrics"),
    path("accounts/", include("django.contrib.auth.urls")),
    path("api/v1/", include("governance.api.urls")),
    path("", include("memoryui.views.urls")),
]

handler404 = "memoryui.errors.not_found"
