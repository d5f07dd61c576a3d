from memoryhub.celery import app as celery_app

__all__ = ["VERSION", "celery_app"]

# The release this code is, or leads to (CHANGELOG.md); written into backups' manifests.
VERSION = "0.2.0.dev0"
