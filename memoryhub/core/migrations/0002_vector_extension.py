# pgvector is required by every memory table. On an external PostgreSQL the role that
# migrates needs the right to CREATE EXTENSION (or an admin creates it beforehand).
from django.db import migrations
from pgvector.django import VectorExtension


class Migration(migrations.Migration):
    dependencies = [("core", "0001_initial")]
    operations = [VectorExtension()]
