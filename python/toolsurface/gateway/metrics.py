"""The gateway's Prometheus metrics: counters and a latency histogram, in the text format.

Small enough to write by hand (the text exposition format 0.0.4), so the gateway needs no
metrics library. What is counted:

- ``toolsurface_gateway_sessions_opened_total``: sessions opened (HTTP ``initialize``);
- ``toolsurface_gateway_sessions_held``: sessions held in this process's memory now;
- ``toolsurface_gateway_searches_total``: ToolSearch calls answered;
- ``toolsurface_gateway_calls_total{upstream,outcome}``: calls forwarded, by upstream and
  ``ok`` / ``error`` (the upstream's ``isError``, or it was down or timed out);
- ``toolsurface_gateway_call_seconds{upstream}``: their latency, a histogram;
- ``toolsurface_gateway_forwarded_total{upstream,method,outcome}``: requests beside tool
  calls forwarded to an upstream (``resources/read``, ``prompts/list``…), ``ok`` or ``error``;
- ``toolsurface_gateway_upstream_up{upstream}``: 1 while an upstream is connected;
- ``toolsurface_gateway_http_requests_total{code}``: HTTP answers, by status;
- ``toolsurface_gateway_errors_total{kind}``: ``store`` (a 503: the store did not answer),
  ``upstream`` (a forwarded call that failed), ``auth`` (a refused token).

Rendered for a client of a tokens file, a row labelled with an upstream the client does
not see is left out (``render(visible=...)``): the metrics never name it to that client.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Callable, Iterable, Mapping

__all__ = ["BUCKETS", "GatewayMetrics", "gauge_rows"]

#: Upper bounds of the latency histogram, in seconds.
BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0)

_HELP = {
    "toolsurface_gateway_sessions_opened_total": ("counter", "Sessions opened."),
    "toolsurface_gateway_sessions_held": ("gauge", "Sessions held in this process's memory."),
    "toolsurface_gateway_searches_total": ("counter", "ToolSearch calls answered."),
    "toolsurface_gateway_calls_total": ("counter", "Calls forwarded to an upstream."),
    "toolsurface_gateway_call_seconds": ("histogram", "Latency of forwarded calls."),
    "toolsurface_gateway_forwarded_total": (
        "counter",
        "Requests beside tool calls forwarded to an upstream.",
    ),
    "toolsurface_gateway_upstream_up": ("gauge", "1 while the upstream is connected."),
    "toolsurface_gateway_http_requests_total": ("counter", "HTTP requests answered."),
    "toolsurface_gateway_errors_total": ("counter", "Errors, by kind."),
}

Labels = tuple[tuple[str, str], ...]


def _escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def _labels(labels: Labels) -> str:
    if not labels:
        return ""
    return "{" + ",".join(f'{k}="{_escape(v)}"' for k, v in labels) + "}"


def _number(value: float) -> str:
    if math.isinf(value):
        return "+Inf"
    return repr(float(value)) if value != int(value) else str(int(value))


class GatewayMetrics:
    """Counters and histograms of one gateway process, safe to update from any thread."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._counters: dict[tuple[str, Labels], float] = {}
        # (name, labels) -> (bucket counts, sum, count)
        self._histograms: dict[tuple[str, Labels], tuple[list[int], float, int]] = {}

    def inc(self, name: str, labels: Labels = (), by: float = 1.0) -> None:
        """Add ``by`` to a counter."""
        with self._lock:
            key = (name, labels)
            self._counters[key] = self._counters.get(key, 0.0) + by

    def observe(self, name: str, labels: Labels, seconds: float) -> None:
        """Count one observation of ``seconds`` in a histogram."""
        with self._lock:
            counts, total, n = self._histograms.get((name, labels), ([0] * len(BUCKETS), 0.0, 0))
            for i, bound in enumerate(BUCKETS):
                if seconds <= bound:
                    counts[i] += 1
            self._histograms[(name, labels)] = (counts, total + seconds, n + 1)

    def call(self, upstream: str, error: bool, seconds: float) -> None:
        """A forwarded call to ``upstream`` ended, ``error`` or not, after ``seconds``."""
        labels = (("upstream", upstream),)
        outcome = "error" if error else "ok"
        self.inc("toolsurface_gateway_calls_total", (*labels, ("outcome", outcome)))
        self.observe("toolsurface_gateway_call_seconds", labels, seconds)
        if error:
            self.inc("toolsurface_gateway_errors_total", (("kind", "upstream"),))

    def forwarded(self, upstream: str, method: str, ok: bool) -> None:
        """A request beside a tool call (``method``) was forwarded to ``upstream``."""
        labels = (("upstream", upstream), ("method", method), ("outcome", "ok" if ok else "error"))
        self.inc("toolsurface_gateway_forwarded_total", labels)

    def value(self, name: str, labels: Labels = ()) -> float:
        """A counter's value now (0 if never counted)."""
        with self._lock:
            return self._counters.get((name, labels), 0.0)

    def render(
        self,
        gauges: Iterable[tuple[str, Labels, float]] = (),
        *,
        visible: Callable[[str], bool] | None = None,
    ) -> str:
        """Every metric in the text format, with ``gauges`` read by the caller now.

        With ``visible``, a row whose ``upstream`` label it refuses is left out.
        """

        def shown(labels: Labels) -> bool:
            return visible is None or all(k != "upstream" or visible(v) for k, v in labels)

        with self._lock:
            counters = {k: v for k, v in self._counters.items() if shown(k[1])}
            histograms = {
                k: (list(c), s, n) for k, (c, s, n) in self._histograms.items() if shown(k[1])
            }
        gauges = [row for row in gauges if shown(row[1])]
        rows: dict[str, list[str]] = {name: [] for name in _HELP}
        for (name, labels), value in sorted(counters.items()):
            rows.setdefault(name, []).append(f"{name}{_labels(labels)} {_number(value)}")
        for name, labels, value in gauges:
            rows.setdefault(name, []).append(f"{name}{_labels(labels)} {_number(value)}")
        for (name, labels), (counts, total, n) in sorted(histograms.items()):
            lines = rows.setdefault(name, [])
            for bound, count in zip(BUCKETS, counts):
                le = (*labels, ("le", _number(bound)))
                lines.append(f"{name}_bucket{_labels(le)} {count}")
            lines.append(f"{name}_bucket{_labels((*labels, ('le', '+Inf')))} {n}")
            lines.append(f"{name}_sum{_labels(labels)} {_number(total)}")
            lines.append(f"{name}_count{_labels(labels)} {n}")
        out: list[str] = []
        for name, lines in rows.items():
            kind, text = _HELP.get(name, ("untyped", name))
            out += [f"# HELP {name} {text}", f"# TYPE {name} {kind}", *lines]
        return "\n".join(out) + "\n"


def gauge_rows(held: int, upstreams: Mapping[str, bool]) -> list[tuple[str, Labels, float]]:
    """The gauges of a gateway now: sessions held, and each upstream up or not."""
    rows: list[tuple[str, Labels, float]] = [("toolsurface_gateway_sessions_held", (), held)]
    for name, up in sorted(upstreams.items()):
        rows.append(("toolsurface_gateway_upstream_up", (("upstream", name),), 1.0 if up else 0.0))
    return rows
