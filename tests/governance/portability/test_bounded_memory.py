"""A large export is streamed: its Python memory stays at about one chunk of rows however many memories the
scope holds (tracemalloc), and the time it took is printed (a figure, not a timed assertion)."""

from __future__ import annotations

import time
import tracemalloc

from governance.models import Memory
from governance.services.memory import MemoryInput, memory_record_batch
from governance.services.portability import scope_export_lines
from governance.services.portability.export import CHUNK

N = 5000


def _fill(scope, n: int) -> None:
    for start in range(0, n, 1000):
        memory_record_batch(
            items=[
                MemoryInput(
                    scope=scope,
                    kind="episodic",
                    source_kind="user",
                    session=f"s{i // 50}",
                    text=f"Turn {i}: the client asked again about the Q3 deck, this time about slide {i % 40} "
                    f"and whether its chart should use the new colours ({'x' * 200}).",
                )
                for i in range(start, min(n, start + 1000))
            ],
            actor=None,
        )


def _export(scope) -> tuple[int, int]:
    """(bytes written, peak traced bytes)."""
    tracemalloc.start()
    size = sum(len(line) for line in scope_export_lines(scope))
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return size, peak


def test_a_5k_memory_export_streams_with_bounded_memory(project_scope, sibling_scope):
    _fill(project_scope, N)
    _fill(sibling_scope, N // 5)
    assert Memory.objects.filter(scope=project_scope).count() == N
    started = time.perf_counter()
    lines = sum(1 for _ in scope_export_lines(project_scope))  # timed without tracemalloc, which slows it
    seconds = time.perf_counter() - started
    size, peak = _export(project_scope)
    small_size, small_peak = _export(sibling_scope)
    print(
        f"\nexport of {N} memories ({lines} lines, {size / 1e6:.1f} MB) in {seconds:.2f} s "
        f"({N / seconds:.0f} memories/s); peak Python memory {peak / 1e6:.1f} MB, "
        f"against {small_peak / 1e6:.1f} MB for {N // 5} memories ({small_size / 1e6:.1f} MB)"
    )
    # Five times the rows, not five times the memory: a chunk of CHUNK rows at a time, never the whole file.
    assert size > 5 * small_size * 0.9 and N > CHUNK
    assert peak < size / 2
    assert peak < 2 * small_peak


def _import_peak(scope, path, into) -> tuple[int, int, float]:
    """(file size, peak traced bytes, seconds under tracemalloc) of exporting `scope` to `path` and importing it."""
    from governance.services.portability import scope_import

    with path.open("w", encoding="utf-8") as out:
        for line in scope_export_lines(scope):
            out.write(line)
    tracemalloc.start()
    started = time.perf_counter()
    with path.open(encoding="utf-8") as handle:
        scope_import(lines=handle, into=into, actor=None)
    seconds = time.perf_counter() - started
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return path.stat().st_size, peak, seconds


def test_a_5k_memory_import_reads_the_file_line_by_line_with_bounded_memory(
    project_scope, sibling_scope, tmp_path
):
    _fill(project_scope, N)
    _fill(sibling_scope, N // 5)
    size, peak, seconds = _import_peak(project_scope, tmp_path / "big.jsonl", "copied/big")
    small_size, small_peak, _ = _import_peak(sibling_scope, tmp_path / "small.jsonl", "copied/small")
    assert Memory.objects.filter(scope__path="copied/big").count() == N
    print(
        f"\nimport of {N} memories ({size / 1e6:.1f} MB) in {seconds:.2f} s under tracemalloc; peak Python "
        f"memory {peak / 1e6:.1f} MB, against {small_peak / 1e6:.1f} MB for {N // 5} ({small_size / 1e6:.1f} MB)"
    )
    # Batches of rows and the id maps (a few dozen bytes per memory), never the file.
    assert peak < 1.5 * small_peak
    assert peak < size
