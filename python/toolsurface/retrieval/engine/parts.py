"""An index built a part at a time: each part's documents analysed while the next is made.

A registry makes its tools' texts in Python (a walk of each schema, which needs the
interpreter) and the native engine analyses them without it. Made whole and then analysed,
the two run one after the other, one core idle during the first; a part at a time, a
worker thread has the engine analyse part ``i`` (the interpreter let go) while this thread
makes part ``i + 1``. The index is the same either way: each part's documents keep their
ids, and the engine assembles the parts' analyses in order.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

from toolsurface.retrieval.packed_fields import IndexDoc

__all__ = ["PART_DOCS", "index_in_parts"]

#: Documents a part. Each part's analysis is chunked again for the engine's threads, and
#: every chunk adds a vocabulary to merge, so parts are few (docs/performance.md).
PART_DOCS = 16_384


def index_in_parts(
    index_type: Any,
    analyzer: Any,
    names: Sequence[str],
    part: Callable[[int, int], list[IndexDoc]],
    part_docs: int | None = None,
) -> Any:
    """The native index of ``names``, whose documents ``part(lo, hi)`` makes in turn.

    ``index_type`` is the native ``Index`` (``analyse`` and ``assembled``); ``part_docs``
    documents a part (default :data:`PART_DOCS`). Fewer than two parts' worth are made at
    once and indexed (no thread). A failure to make or analyse a part is raised once the
    analyses under way have finished.
    """
    n, size = len(names), part_docs or PART_DOCS
    if n < 2 * size:
        return index_type(analyzer, list(names), part(0, n))
    analysed: list[Future[Any]] = []
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="toolsurface-index") as worker:
        for lo in range(0, n, size):
            hi = min(lo + size, n)
            docs = part(lo, hi)
            analysed.append(worker.submit(index_type.analyse, analyzer, names[lo:hi], docs, lo))
        parts = [future.result() for future in analysed]
    return index_type.assembled(analyzer, list(names), parts)
