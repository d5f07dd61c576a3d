from django.urls import path

from agents_api import views

app_name = "agents_api"

urlpatterns = [
    path("me", views.MeView.as_view(), name="me"),
]
