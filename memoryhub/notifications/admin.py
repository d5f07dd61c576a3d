from django.contrib import admin

from memoryhub.notifications.models import EmailDelivery, NotificationSetting, WebhookDelivery, WebhookEndpoint


@admin.register(WebhookEndpoint)
class WebhookEndpointAdmin(admin.ModelAdmin):
    list_display = ["id", "workspace", "url", "format", "enabled", "created_at"]
    list_filter = ["enabled", "format"]
    # The signing secrets sign deliveries; nobody reads them again, here neither.
    exclude = ["secret", "previous_secret"]


@admin.register(WebhookDelivery)
class WebhookDeliveryAdmin(admin.ModelAdmin):
    list_display = ["id", "endpoint", "event", "status", "attempts", "last_status_code", "next_attempt_at"]
    list_filter = ["status", "event"]
    # What a reviewer reads (args, content) may be in a body: for the receiver, not for browsing.
    exclude = ["body", "user_id"]


@admin.register(EmailDelivery)
class EmailDeliveryAdmin(admin.ModelAdmin):
    list_display = ["id", "address", "event", "status", "attempts", "last_status_code", "next_attempt_at"]
    list_filter = ["status", "event"]
    exclude = ["body", "user_id"]


@admin.register(NotificationSetting)
class NotificationSettingAdmin(admin.ModelAdmin):
    list_display = ["membership", "email", "events", "updated_at"]
