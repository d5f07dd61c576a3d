from django.contrib import admin
from django.urls import include, path
from django.views.decorators.csp import csp_override
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerSplitView

from memoryhub.core.views import healthz
from memoryhub.observability.views import metrics
from memoryhub.settings import SECURE_CSP

# Swagger UI styles itself inline; only its page gets that allowance.
docs_csp = {**SECURE_CSP, "style-src": [*SECURE_CSP["style-src"], "'unsafe-inline'"]}

urlpatterns = [
    path("healthz", healthz, name="healthz"),
    path("metrics", metrics, name="metrics"),
    path("api/v1/", include("agents_api.urls")),
    path("api/schema/", SpectacularAPIView.as_view(), name="schema"),
    path("api/docs/", csp_override(docs_csp)(SpectacularSwaggerSplitView.as_view(url_name="schema")), name="api-docs"),
    path("admin/", admin.site.urls),
    path("", include("console.urls")),
]

handler400 = "memoryhub.serving.http_errors.bad_request"
handler403 = "memoryhub.serving.http_errors.permission_denied"
handler404 = "memoryhub.serving.http_errors.page_not_found"
handler500 = "memoryhub.serving.outages.server_error"
