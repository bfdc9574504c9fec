"""numpy's BLAS on one thread while a write runs, so that it does not fight the embedder.

OpenBLAS wakes its threads for any product past a few thousand cells (the write path's
neighbour searches and similarity matrices are such products) and leaves them spinning for a
while after. On a machine whose cores torch's threads already use for the embedder, that spin
slowed the write path's embedding by about a fifth: on the 2-core development machine a
LoCoMo history's bulk ingest took 4.7-5.2 s with numpy's default threads and 4.2-4.5 s with
one. The write path's products are small (a user's summaries), so one thread loses nothing
there.

The limit is process-wide while it holds, as it is when scikit-learn does the same through
threadpoolctl: another thread's numpy products run on one thread during a write. Overlapping
writes share one limit, restored when the last ends, so the application's own setting is
always what remains. One exception, seen with numpy's OpenBLAS 0.3.31: once the main thread
has set a thread count itself, a limit set from another thread does not take, so writes from
other threads then run with the main thread's setting, as they did before.

threadpoolctl is imported by the first write, not with hymem: importing it sets
`KMP_DUPLICATE_LIB_OK` in the process environment, and `import hymem` changes nothing there.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from threadpoolctl import ThreadpoolController

_lock = threading.Lock()
_holders = 0
_limiter: Any = None  # threadpoolctl's limiter of the writes in progress, None between them
_controller: ThreadpoolController | None = None
_modules_seen = 0  # len(sys.modules) when `_controller` was made


def _blas() -> ThreadpoolController:
    """The BLAS libraries loaded now. Finding them takes ~1 ms, so they are looked up again
    only when a module was imported since (scipy, imported late, brings its own OpenBLAS)."""
    global _controller, _modules_seen
    from threadpoolctl import ThreadpoolController

    if _controller is None or len(sys.modules) != _modules_seen:
        _controller = ThreadpoolController().select(user_api="blas")
        _modules_seen = len(sys.modules)
    return _controller


@contextmanager
def one_blas_thread() -> Iterator[None]:
    """numpy's BLAS limited to one thread for the block (and any block overlapping it)."""
    global _holders, _limiter
    with _lock:
        if _holders == 0:
            _limiter = _blas().limit(limits=1)
        _holders += 1
    try:
        yield
    finally:
        with _lock:
            _holders -= 1
            if _holders == 0:
                _limiter.restore_original_limits()
                _limiter = None


__all__ = ["one_blas_thread"]
