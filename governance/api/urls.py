"""/api/v1/: the agent API (urls_agent) and the governance API (urls_governance), plus the schema."""

from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerView

urlpatterns = [
    path("schema/", SpectacularAPIView.as_view(), name="api-schema"),
    path("docs/", SpectacularSwaggerView.as_view(url_name="api-schema"), name="api-docs"),
    path("", include("governance.api.urls_agent")),
    path("", include("governance.api.urls_governance")),
]
