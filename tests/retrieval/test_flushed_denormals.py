"""A process that flushes denormals to zero gets the same rankings.

Code loaded beside toolsurface may set the CPU to treat denormal floats as zero
(``torch.set_flush_denormal(True)``, a library built with ``-ffast-math``); a bound that is
a denormal then compares as 0.0, so a scan that relied on one admitted documents scoring
0.0. Set here through glibc's ``fesetenv`` (x86-64: the MXCSR word of ``fenv_t``) in a
thread of its own, which is where the setting lives.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import platform
import sys
import threading

import pytest

from toolsurface import ToolRegistry
from toolsurface.catalogue import demo_catalogue

# FTZ (flush to zero) and DAZ (denormals are zero) in MXCSR; fenv_t keeps MXCSR at byte 28.
_FTZ_DAZ = 0x8040
_MXCSR_AT = 28

if not (sys.platform == "linux" and platform.machine() == "x86_64"):
    pytest.skip("sets the x86-64 MXCSR through glibc", allow_module_level=True)
_LIBM = ctypes.util.find_library("m")
if _LIBM is None:
    pytest.skip("no libm to set the floating-point environment with", allow_module_level=True)


def _flush_denormals() -> None:
    """Make this thread treat denormals as zero; fail the test if it did not take."""
    libm = ctypes.CDLL(_LIBM)
    env = (ctypes.c_uint8 * 32)()
    assert libm.fegetenv(env) == 0
    word = int.from_bytes(bytes(env[_MXCSR_AT : _MXCSR_AT + 4]), "little") | _FTZ_DAZ
    env[_MXCSR_AT : _MXCSR_AT + 4] = list(word.to_bytes(4, "little"))
    assert libm.fesetenv(env) == 0
    tiny = ctypes.c_double(5e-324)
    assert tiny.value * 1.0 == 5e-324  # Python's own arithmetic is not what flushes
    check = (ctypes.c_uint8 * 32)()
    libm.fegetenv(check)
    assert int.from_bytes(bytes(check[_MXCSR_AT : _MXCSR_AT + 4]), "little") & _FTZ_DAZ


@pytest.mark.parametrize("engine", ["native", "pure"])
def test_rankings_are_the_same_with_denormals_flushed(engine: str) -> None:
    registry = ToolRegistry(demo_catalogue(), engine=engine)  # type: ignore[arg-type]
    requests = [("calendar event", 60), ("slack channel", 30), ("list open issues", 100)]
    want = [registry.search(q, k=k) for q, k in requests]
    assert all(h.score > 0.0 for hits in want for h in hits)
    got: list[object] = []

    def flushed() -> None:
        try:
            _flush_denormals()
            got.extend(registry.search(q, k=k) for q, k in requests)
        except BaseException as exc:  # handed to the test thread, which fails on it
            got.append(exc)

    thread = threading.Thread(target=flushed)
    thread.start()
    thread.join()
    assert got == want
