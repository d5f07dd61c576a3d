from django.apps import AppConfig


class ConversationsConfig(AppConfig):
    name = "memoryhub.conversations"
    label = "conversations"
    verbose_name = "Conversations"
