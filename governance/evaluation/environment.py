"""Where a figure was measured: commit, machine, PostgreSQL, embedder; stored on every EvaluationRun."""

from __future__ import annotations

import os
import platform
import subprocess

from django.db import connection


def environment() -> dict:
    from django.conf import settings

    with connection.cursor() as cursor:
        cursor.execute("SHOW server_version")
        pg = cursor.fetchone()[0]
    try:
        commit = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"],
            capture_output=True,
            text=True,
            cwd=settings.BASE_DIR,
            timeout=5,
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        commit = ""
    return {
        "commit": commit,
        "cpus": os.cpu_count(),
        "machine": platform.machine(),
        "python": platform.python_version(),
        "platform": platform.platform(terse=True),
        "postgres": pg,
        "embedder": settings.EMBEDDING_BACKEND,
        "token_counter": settings.TOKEN_COUNTER,
    }
