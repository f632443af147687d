"""`collectstatic` when the static sources changed since the last collection, else nothing (runstack at
every start, the tests once per run, bench_pages --browser). Hashing and compressing every file (brotli at
its best level for the chart bundle) takes seconds that a restart with unchanged files need not spend."""

from __future__ import annotations

import fcntl
import hashlib
from pathlib import Path

from django.conf import settings
from django.contrib.staticfiles import finders
from django.core.management import call_command

FINGERPRINT = ".sources"
IGNORE = ["CVS", ".*", "*~"]  # collectstatic's default ignore patterns


def sources_fingerprint() -> str:
    """A digest of every file the finders offer (name, size, modification time) and the storage used."""
    entries = []
    for finder in finders.get_finders():
        for path, storage in finder.list(IGNORE):
            stat = Path(storage.path(path)).stat()
            prefix = getattr(storage, "prefix", None) or ""
            entries.append(f"{prefix}/{path}\0{stat.st_size}\0{stat.st_mtime_ns}")
    entries.append(settings.STORAGES["staticfiles"]["BACKEND"])
    return hashlib.sha256("\n".join(sorted(entries)).encode()).hexdigest()


def collect_static() -> bool:
    """Collect into STATIC_ROOT unless it already holds these sources; True when it collected. A lock
    in the folder keeps parallel callers (test processes) from collecting over each other."""
    root = Path(settings.STATIC_ROOT)
    root.mkdir(parents=True, exist_ok=True)
    with open(root / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        digest = sources_fingerprint()
        marker = root / FINGERPRINT
        if (root / "staticfiles.json").exists() and marker.exists() and marker.read_text() == digest:
            return False
        call_command("collectstatic", interactive=False, verbosity=0)
        marker.write_text(digest)
        return True
