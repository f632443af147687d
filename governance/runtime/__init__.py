"""Process-level pieces of a long-running server process: GC tuning, per-process thread pools, the cores
the process may use."""

from __future__ import annotations

import gc
import os
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor


def freeze_startup_objects() -> int:
    """Collect once, then move every object alive after start-up into the permanent generation
    (`gc.freeze`). Django, DRF, the URL resolvers and the embedder's Python objects live as long as the
    process; without this, each full (generation 2) collection walks all ~100k of them, and one such
    pass took 103 ms in the middle of a /context request (bench_context at 1M, measured with
    gc.callbacks). Afterwards a full collection only walks what requests create. Returns how many
    objects were frozen."""
    gc.collect()
    gc.freeze()
    return gc.get_freeze_count()


def process_cores() -> int:
    """The cores this process may run on: its CPU affinity where the platform has one (a container or
    `taskset` may give it fewer than the machine has), else the machine's count."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


_pools_lock = threading.Lock()
_pools: dict[str, tuple[int, ThreadPoolExecutor]] = {}


def process_pool(
    name: str, workers: int, initializer: Callable[[], None] | None = None
) -> ThreadPoolExecutor:
    """A small thread pool per name and process, keyed by pid: threads do not survive a fork, and a pool
    inherited from the parent would believe it still had them (queued work would never run)."""
    with _pools_lock:
        entry = _pools.get(name)
        if entry is None or entry[0] != os.getpid():
            entry = (
                os.getpid(),
                ThreadPoolExecutor(max_workers=workers, thread_name_prefix=name, initializer=initializer),
            )
            _pools[name] = entry
        return entry[1]
