"""A stdio process that does not go away as a server should, for the transport's tests.

``python linger_server.py stubborn``: ignores SIGTERM and never reads stdin, so only the
process group's SIGKILL ends it. ``python linger_server.py orphan``: starts a child that
inherits stdout and sleeps, then exits when its stdin closes, leaving the child holding the
pipe.
"""

from __future__ import annotations

import signal
import subprocess
import sys
import time

if sys.argv[1:] == ["stubborn"]:
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    while True:
        time.sleep(60)
elif sys.argv[1:] == ["orphan"]:
    subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    sys.stdin.read()
else:
    sys.exit("usage: linger_server.py stubborn|orphan")
