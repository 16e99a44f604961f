"""The gateway's log lines on stderr: as text, or one JSON object a line (``--log-format json``).

A JSON line holds ``time`` (UTC, ISO 8601), ``level``, ``logger`` and ``message``, and the
fields a line was given (an access line's ``method``, ``path``, ``status``, ``client``,
``ms``), so a log pipeline reads them without parsing the message.
"""

from __future__ import annotations

import json
import logging
import sys
from datetime import datetime, timezone
from typing import Literal, TextIO

__all__ = ["JsonLines", "LogFormat", "configure_logs"]

LogFormat = Literal["text", "json"]
#: The attributes every ``LogRecord`` has: anything else on a record is a field it was given.
_STANDARD = set(vars(logging.makeLogRecord({}))) | {"message", "asctime", "taskName"}


class JsonLines(logging.Formatter):
    """A record as one JSON object on one line."""

    def format(self, record: logging.LogRecord) -> str:
        """The record's time, level, logger, message and extra fields, as JSON."""
        line: dict[str, object] = {
            "time": datetime.fromtimestamp(record.created, timezone.utc).isoformat(
                timespec="milliseconds"
            ),
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": record.getMessage(),
        }
        for key, value in vars(record).items():
            if key not in _STANDARD and not key.startswith("_"):
                line[key] = (
                    value if isinstance(value, (str, int, float, bool, type(None))) else str(value)
                )
        if record.exc_info:
            line["error"] = self.formatException(record.exc_info)
        return json.dumps(line, ensure_ascii=False)


def configure_logs(kind: LogFormat, stream: TextIO | None = None) -> logging.Handler:
    """Send the ``toolsurface`` loggers' lines, INFO and up, to ``stream`` (stderr) as ``kind``."""
    handler = logging.StreamHandler(stream if stream is not None else sys.stderr)
    handler.setFormatter(JsonLines() if kind == "json" else logging.Formatter("%(message)s"))
    root = logging.getLogger("toolsurface")
    root.addHandler(handler)
    root.setLevel(logging.INFO)
    return handler
