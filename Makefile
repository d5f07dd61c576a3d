# MemoryHub: `make run` serves the hub, `make test` runs the tests. Both set up
# everything they need (virtualenv, dependencies, database) on a fresh machine.

PORT ?= 8000
VENV ?= .venv
VPY := $(VENV)/bin/python

# `python3` may be older than 3.12, and pyenv shims (python3.12, python3.13) exit
# non-zero unless that version is selected, so each candidate is *run* to prove it
# works, then pyenv's versions folder is tried directly.
define FIND_PYTHON
for p in "$$PYTHON" python3.13 python3.12 python3 \
         $$(ls -d $${PYENV_ROOT:-$$HOME/.pyenv}/versions/3.1[2-9]*/bin/python3 2>/dev/null | sort -rV) \
         /usr/bin/python3.13 /usr/bin/python3.12 /usr/local/bin/python3.13 /usr/local/bin/python3.12; do \
  [ -n "$$p" ] || continue; \
  if "$$p" -c 'import sys, venv; sys.exit(0 if sys.version_info >= (3, 12) else 1)' >/dev/null 2>&1; then \
    command -v "$$p" 2>/dev/null || echo "$$p"; exit 0; \
  fi; \
done; exit 1
endef

.PHONY: run test venv install migrate check lock worker bench bench-install

$(VENV)/.installed: requirements.txt requirements-dev.txt constraints.txt
	@py=$$( $(FIND_PYTHON) ) || { echo "error: MemoryHub needs Python 3.12 or newer; none found (tried python3.13, python3.12, python3 and ~/.pyenv/versions). Install one or set PYTHON=/path/to/python3.12." >&2; exit 1; }; \
	if [ ! -x $(VPY) ] || ! $(VPY) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 12) else 1)' 2>/dev/null; then \
	  echo "creating $(VENV) with $$py"; rm -rf $(VENV); "$$py" -m venv $(VENV); fi
	$(VPY) -m pip install --quiet --disable-pip-version-check --upgrade pip
	$(VPY) -m pip install --quiet --disable-pip-version-check -r requirements-dev.txt -c constraints.txt
	@touch $@

venv install: $(VENV)/.installed

migrate: install
	$(VPY) manage.py migrate --no-input

# The demo workspace, on a hub without data only (README, "Demo data"); a demo that
# fails to seed must not keep the hub from starting, hence the `-`.
run: migrate
	$(VPY) manage.py collectstatic --no-input --verbosity 0
	-PORT=$(PORT) $(VPY) manage.py seed_demo --if-empty
	$(VPY) -m uvicorn memoryhub.asgi:application --host 127.0.0.1 --port $(PORT) --lifespan off

worker: install
	$(VENV)/bin/celery -A memoryhub worker --beat --loglevel INFO

test: install
	$(VPY) -m ruff check --quiet .
	$(VENV)/bin/lint-imports --no-logo --no-cache
	$(VPY) -m pytest

check: install
	$(VPY) manage.py check

lock: install bench-install
	{ printf '# Every transitive dependency, pinned (pip freeze of a venv built from requirements-dev.txt\n# and requirements-bench.txt). Regenerate with: make lock\n'; \
	  $(VPY) -m pip freeze --exclude-editable; } > constraints.txt

$(VENV)/.bench-installed: $(VENV)/.installed requirements-bench.txt
	$(VPY) -m pip install --quiet --disable-pip-version-check -r requirements-bench.txt -c constraints.txt
	@touch $@

bench-install: $(VENV)/.bench-installed

# Every benchmark of benchmarks/registry.py with its defaults, the sizes the README
# reports: a long run (the purge loads a 1M-row hub). One alone: `manage.py bench NAME`.
bench: migrate bench-install
	$(VPY) manage.py bench --all
