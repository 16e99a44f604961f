"""Run blocking work in a worker thread, so an event loop waits on none of it.

The async methods (``ToolRegistry.asearch``, ``aprepare``, ``ToolSurface.aplan``) await
:func:`off_loop`. The work runs with the cyclic collector paused (``gcpause.py``): an index
build makes many containers and no garbage, and a full collection it triggered in the worker
would hold the interpreter's lock for tens of milliseconds, stalling the loop as if it ran
there. What is left to the loop is the interpreter's own switch between threads while the
worker runs Python (registering, grouping, the pure engine): the work runs with the switch
interval shortened to 1 ms (``switch_interval.py``) instead of the default 5 ms. The native
index build runs without the lock.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Callable
from typing import ParamSpec, TypeVar

from toolsurface._internal.gcpause import gc_paused
from toolsurface._internal.switch_interval import switch_shortened

__all__ = ["off_loop"]

_P = ParamSpec("_P")
_T = TypeVar("_T")


async def off_loop(work: Callable[_P, _T], /, *args: _P.args, **kwargs: _P.kwargs) -> _T:
    """``work(*args, **kwargs)`` in a worker thread (``asyncio.to_thread``), the loop kept free.

    The collector is paused and the switch interval shortened while the work runs. The
    interval is shortened here, on the loop's thread, before the worker starts: a worker that
    shortened it itself would first run (and start its thread) at the host's interval.
    """
    with switch_shortened():
        return await asyncio.to_thread(_paused, functools.partial(work, *args, **kwargs))


def _paused(call: Callable[[], _T]) -> _T:
    with gc_paused(), switch_shortened():
        return call()
