from __future__ import annotations

import os
import secrets
import json
import subprocess
import sys

from django.conf import settings

from tests.conftest import hub_database_url, run_python


def run_manage(*args: str, **env: str) -> subprocess.CompletedProcess:
    full_env = {**os.environ, **env}
    full_env.pop("DJANGO_ALLOW_ASYNC_UNSAFE", None)  # set by the browser fixture for the test process only
    # The test database's server: a command given a fresh data dir would otherwise start an
    # embedded PostgreSQL of its own there, which nothing stops.
    full_env.setdefault("DATABASE_URL", hub_database_url())
    return run_python([sys.executable, "manage.py", *args], env=full_env)


def test_it_passes_the_deploy_check_with_production_settings() -> None:
    result = run_manage(
        "check", "--deploy", "--fail-level", "WARNING",
        MEMORYHUB_SECRET_KEY=secrets.token_urlsafe(64), MEMORYHUB_TLS="1", MEMORYHUB_DEBUG="0",
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "no issues" in result.stdout


def test_it_warns_when_debug_is_on_in_production() -> None:
    result = run_manage(
        "check", "--deploy", "--fail-level", "WARNING",
        MEMORYHUB_SECRET_KEY=secrets.token_urlsafe(64), MEMORYHUB_TLS="1", MEMORYHUB_DEBUG="1",
    )
    assert result.returncode != 0
    assert "security.W018" in result.stdout + result.stderr


def test_it_keeps_a_generated_secret_key_in_the_data_dir(tmp_path: object) -> None:
    code = "from django.conf import settings; print(settings.SECRET_KEY)"
    env = {"MEMORYHUB_DATA_DIR": str(tmp_path), "MEMORYHUB_SECRET_KEY": ""}
    first = run_manage("shell", "-c", code, **env).stdout.strip().splitlines()[-1]
    second = run_manage("shell", "-c", code, **env).stdout.strip().splitlines()[-1]
    assert len(first) >= 50 and first == second
    assert (tmp_path / "secret_key").stat().st_mode & 0o077 == 0  # type: ignore[operator]


def test_it_uses_the_embedded_database_unless_database_url_is_set() -> None:
    if os.environ.get("DATABASE_URL"):
        assert settings.DATABASES["default"]["ENGINE"] == "django.db.backends.postgresql"
    else:
        assert settings.DATABASES["default"]["ENGINE"] == "memoryhub.platform.db_embedded"


KEYS = "from django.conf import settings; print(settings.SECRET_KEY); print(settings.MEMORYHUB_PSEUDONYM_KEY)"


def test_it_makes_the_pseudonym_key_worth_nothing_but_pseudonyms(tmp_path: object) -> None:
    # Backups carry the pseudonym key: it must never be the key that signs console sessions.
    env = {"MEMORYHUB_DATA_DIR": str(tmp_path), "MEMORYHUB_SECRET_KEY": "", "MEMORYHUB_PSEUDONYM_KEY": ""}
    secret, pseudonym = run_manage("shell", "-c", KEYS, **env).stdout.split()[-2:]
    assert secret != pseudonym
    assert {name: (tmp_path / name).stat().st_mode & 0o777 for name in ("secret_key", "pseudonym_key")} == {"secret_key": 0o600, "pseudonym_key": 0o600}


def test_a_data_dir_of_an_older_hub_keeps_its_pseudonyms_and_gets_a_new_secret_key(tmp_path: object) -> None:
    # Older hubs made pseudonyms with the secret key, and later ones copied it into the pseudonym key.
    for older in ({"secret_key": "old-secret"}, {"secret_key": "old-secret", "pseudonym_key": "old-secret"}):
        data_dir = tmp_path / str(len(older))
        data_dir.mkdir()
        for name, value in older.items():
            (data_dir / name).write_text(value)
        env = {"MEMORYHUB_DATA_DIR": str(data_dir), "MEMORYHUB_SECRET_KEY": "", "MEMORYHUB_PSEUDONYM_KEY": ""}
        secret, pseudonym = run_manage("shell", "-c", KEYS, **env).stdout.split()[-2:]
        assert pseudonym == "old-secret" and secret not in ("old-secret", "")
        assert run_manage("shell", "-c", KEYS, **env).stdout.split()[-2:] == [secret, pseudonym]  # and stays so


def test_a_secret_key_set_to_the_pseudonym_key_fails_the_checks(tmp_path: object) -> None:
    same = secrets.token_urlsafe(64)
    result = run_manage("check", MEMORYHUB_DATA_DIR=str(tmp_path), MEMORYHUB_SECRET_KEY=same, MEMORYHUB_PSEUDONYM_KEY=same)
    assert result.returncode != 0 and "memoryhub.E002" in result.stderr


def test_it_reads_the_mail_server_from_one_url() -> None:
    code = "import json; from django.conf import settings; print(json.dumps(settings.MAILERS['default']))"
    url = "smtps://hub%40example.com:s3cret@mail.example.com"
    mailer = json.loads(run_manage("shell", "-c", code, MEMORYHUB_EMAIL_URL=url).stdout.strip().splitlines()[-1])
    assert mailer["BACKEND"] == "django.core.mail.backends.smtp.EmailBackend"
    assert {key: mailer["OPTIONS"][key] for key in ("host", "port", "username", "password", "use_ssl", "use_tls")} == {
        "host": "mail.example.com", "port": 465, "username": "hub@example.com", "password": "s3cret", "use_ssl": True, "use_tls": False,
    }
    starttls = json.loads(run_manage("shell", "-c", code, MEMORYHUB_EMAIL_URL="smtp://mail.example.com:587?starttls=1").stdout.strip().splitlines()[-1])
    assert (starttls["OPTIONS"]["port"], starttls["OPTIONS"]["use_tls"], starttls["OPTIONS"]["use_ssl"]) == (587, True, False)
    refused = run_manage("check", MEMORYHUB_EMAIL_URL="http://mail.example.com")
    assert refused.returncode != 0 and "MEMORYHUB_EMAIL_URL must be" in refused.stderr
