from django.urls import path

from agents_api import views

app_name = "agents_api"

urlpatterns = [
    path("me", views.MeView.as_view(), name="me"),
    path("keys", views.KeysView.as_view(), name="keys"),
    path("keys/<str:prefix>", views.KeyRevokeView.as_view(), name="key-revoke"),
]
