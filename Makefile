# MemoryHub: `make run` serves the hub, `make test` runs the tests. Both set up
# everything they need (virtualenv, dependencies, database) on a fresh machine.

VENV ?= .venv
# `make run` serves on PORT (8000 by default) and remembers it in var/hub.port, so that
# the targets that talk to the hub (the example agents) find it without PORT again.
HUB_PORT_FILE := var/hub.port
ifeq ($(origin PORT),undefined)
PORT := 8000
HUB_PORT := $(shell cat $(HUB_PORT_FILE) 2>/dev/null || echo 8000)
else
HUB_PORT := $(PORT)
endif
VPY := $(VENV)/bin/python
# X-Forwarded-For and -Proto are believed only from the proxies listed here (uvicorn's
# --forwarded-allow-ips), none by default: otherwise a client on this machine names its
# own address to the login lockout and /metrics' address list (docs/security.md, "Behind a proxy").
TRUSTED_PROXIES ?=
UVICORN_PROXY = $(if $(TRUSTED_PROXIES),--proxy-headers --forwarded-allow-ips '$(TRUSTED_PROXIES)',--no-proxy-headers)

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

.PHONY: run test venv install migrate check lock worker bench bench-install example-agent example-langgraph-agent screenshots docs \
	test-adapters adapters-install lock-adapters

# Installs with uv (Astral's installer, from PyPI): the same pinned set as pip in about a
# tenth of the time (5 s against 50 on a fresh clone here), which `make test` pays on every
# fresh machine. pip takes over where uv fails.
pip_install = $(VENV)/bin/uv pip install --quiet --python $(VPY) $(1) || $(VPY) -m pip install --quiet --disable-pip-version-check $(1)

$(VENV)/.installed: requirements.txt requirements-dev.txt constraints.txt
	@py=$$( $(FIND_PYTHON) ) || { echo "error: MemoryHub needs Python 3.12 or newer; none found (tried python3.13, python3.12, python3 and ~/.pyenv/versions). Install one or set PYTHON=/path/to/python3.12." >&2; exit 1; }; \
	if [ ! -x $(VPY) ] || ! $(VPY) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 12) else 1)' 2>/dev/null; then \
	  echo "creating $(VENV) with $$py"; rm -rf $(VENV); "$$py" -m venv $(VENV); fi
	$(VPY) -m pip install --quiet --disable-pip-version-check "$$(grep '^uv==' constraints.txt)"
	$(call pip_install,-r requirements-dev.txt -c constraints.txt)
	@touch $@

venv install: $(VENV)/.installed

migrate: install
	$(VPY) manage.py migrate --no-input

# The demo workspace, on a hub without data only (docs/getting-started.md, "Demo data"); a demo that
# fails to seed must not keep the hub from starting, hence the `-`.
run: migrate
	$(VPY) manage.py collectstatic --no-input --verbosity 0
	-PORT=$(PORT) $(VPY) manage.py seed_demo --if-empty
	@mkdir -p var && echo $(PORT) > $(HUB_PORT_FILE)
	$(VPY) -m uvicorn memoryhub.asgi:application --host 127.0.0.1 --port $(PORT) --lifespan off $(UVICORN_PROXY) \
	  --http memoryhub.serving.deadlines:HeaderDeadlineProtocol

# The example agents (docs/client.md, "Example agent") against the hub `make run` serves: a key
# for the agent `support-agent` (workspace demo, store support), issued for each run.
# More options through ARGS, e.g. `make example-agent ARGS="--crash-after-step 2"`.
EXAMPLE_KEY = key=$$($(VPY) manage.py issue_key --workspace demo --store support --agent support-agent --label example-agent 2>/dev/null | tail -n 1) \
	  && [ -n "$$key" ] || { echo "error: could not issue a key (is the database up? run \`make run\` first)" >&2; exit 1; };

example-agent: install
	@$(EXAMPLE_KEY) MEMORYHUB_API_KEY=$$key $(VPY) examples/support_agent.py --hub http://127.0.0.1:$(HUB_PORT) $(ARGS)

example-langgraph-agent: install
	@$(EXAMPLE_KEY) MEMORYHUB_API_KEY=$$key $(VPY) examples/langgraph_support_agent.py --hub http://127.0.0.1:$(HUB_PORT) $(ARGS)

# Full-page screenshots of every console page at 1280 and 390 px in var/screenshots/
# (the page walk of tests/test_browser_pages.py), and the manual's four of the demo
# workspace in docs/images/.
screenshots: install
	MEMORYHUB_SCREENSHOTS=1 $(VPY) -m pytest tests/test_browser_pages.py -k "every_page_fits or manuals_screenshots" -q

worker: install
	$(VENV)/bin/celery -A memoryhub worker --beat --loglevel INFO

# The suite in TEST_WORKERS processes (pytest-xdist), then the tests marked `alone` in
# one process: they stop the PostgreSQL server every test process shares. The slowest
# tests are listed at the end (--durations).
TEST_WORKERS ?= 2
# Machines that set PYTHONDONTWRITEBYTECODE (CI's does) keep no compiled modules, so every
# test process, command and worker compiled Django, DRF and our code from source again
# (5 s of CPU each); the first one writes them here and the others read them.
test: export PYTHONDONTWRITEBYTECODE :=
test: install
	$(VPY) -m ruff check --quiet .
	$(VENV)/bin/lint-imports --no-logo --no-cache
	NO_MKDOCS_2_WARNING=1 $(VENV)/bin/mkdocs build --strict --quiet
	$(VPY) -m pytest -n $(TEST_WORKERS) -m "not alone" --durations=25
	$(VPY) -m pytest -m alone

# The framework adapters (memoryhub_client.integrations), each tested with its framework's
# real package against one live hub that tests/adapters_hub.py serves from the hub's own
# environment. The frameworks are heavy and live in environments of their own, never the
# hub's: .venv-adapters (OpenAI Agents SDK, Anthropic, ADK, LlamaIndex, Pydantic AI) and
# .venv-adapters-crewai (CrewAI pins openai<3, the Agents SDK openai>=3). Installs are
# pinned (clients/python/tests/constraints-*.txt) and come from uv's cache after the first.
ADAPTER_TESTS := clients/python/tests
ADAPTER_EXTRAS := openai-agents,anthropic,google-adk,llama-index,pydantic-ai
# One adapter's tests: `make test-adapters ADAPTER_ARGS="tests/test_openai_agents.py -x" CREWAI_ARGS=`
# (an empty group is not run). The hub's log: var/adapters-hub.log.
ADAPTER_ARGS ?= --ignore=tests/test_crewai.py
CREWAI_ARGS ?= tests/test_crewai.py
define adapters_venv
	$(VENV)/bin/uv venv --quiet --allow-existing --python $(VPY) $(1)
	$(VENV)/bin/uv pip install --quiet --python $(1)/bin/python -e "./clients/python[$(2)]" -r $(ADAPTER_TESTS)/requirements-$(3).txt $(4)
endef

.venv-adapters/.installed: clients/python/pyproject.toml $(ADAPTER_TESTS)/requirements-adapters.txt $(ADAPTER_TESTS)/constraints-adapters.txt | $(VENV)/.installed
	$(call adapters_venv,.venv-adapters,$(ADAPTER_EXTRAS),adapters,-c $(ADAPTER_TESTS)/constraints-adapters.txt)
	@touch $@

.venv-adapters-crewai/.installed: clients/python/pyproject.toml $(ADAPTER_TESTS)/requirements-crewai.txt $(ADAPTER_TESTS)/constraints-crewai.txt | $(VENV)/.installed
	$(call adapters_venv,.venv-adapters-crewai,crewai,crewai,-c $(ADAPTER_TESTS)/constraints-crewai.txt)
	@touch $@

adapters-install: .venv-adapters/.installed .venv-adapters-crewai/.installed

test-adapters: export PYTHONDONTWRITEBYTECODE :=
test-adapters: install adapters-install
	$(VPY) -m tests.adapters_hub $(if $(ADAPTER_ARGS),.venv-adapters/bin/python $(ADAPTER_ARGS)) \
	  $(if $(CREWAI_ARGS),-- .venv-adapters-crewai/bin/python $(CREWAI_ARGS))

# The adapters' pins again, from the newest releases the extras' ranges admit.
lock-adapters: install
	rm -rf .venv-adapters .venv-adapters-crewai
	$(call adapters_venv,.venv-adapters,$(ADAPTER_EXTRAS),adapters,)
	$(call adapters_venv,.venv-adapters-crewai,crewai,crewai,)
	for env in adapters crewai; do \
	  venv=.venv-adapters$$( [ $$env = crewai ] && echo -crewai ); \
	  { echo "# Pinned by \`make lock-adapters\`: the $$env test environment of the framework adapters."; \
	    $(VENV)/bin/uv pip freeze --python $$venv/bin/python --exclude-editable; } > $(ADAPTER_TESTS)/constraints-$$env.txt; \
	done

# The manual (docs/, mkdocs.yml) on http://127.0.0.1:8001, rebuilt as pages change.
DOCS_PORT ?= 8001
docs: install
	NO_MKDOCS_2_WARNING=1 $(VENV)/bin/mkdocs serve --dev-addr 127.0.0.1:$(DOCS_PORT)

check: install
	$(VPY) manage.py check

lock: install bench-install
	{ printf '# Every transitive dependency, pinned (pip freeze of a venv built from requirements-dev.txt\n# and requirements-bench.txt). Regenerate with: make lock\n'; \
	  $(VPY) -m pip freeze --exclude-editable; } > constraints.txt

$(VENV)/.bench-installed: $(VENV)/.installed requirements-bench.txt
	$(call pip_install,-r requirements-bench.txt -c constraints.txt)
	@touch $@

bench-install: $(VENV)/.bench-installed

# Every benchmark of benchmarks/registry.py with its defaults, the sizes docs/benchmarks.md
# reports: a long run (the purge loads a 1M-row hub), written to BENCHMARKS.md with each
# figure beside its goal. One alone: `manage.py bench NAME`.
bench: migrate bench-install adapters-install
	$(VPY) manage.py collectstatic --no-input --verbosity 0  # bench console renders pages with hashed static files
	$(VPY) manage.py bench --all --report BENCHMARKS.md
