#!/usr/bin/python3
"""Runs one layout tool as a process and times the whole of it, the same way
for every tool: wall clock from spawn to exit (process start, reading the
graph, layout, writing the positions) and the peak RSS, from os.wait4.

    /usr/bin/python3 timed.py TIMEOUT_S CMD [ARG...]

Prints one JSON line: the tool's own last JSON line (its layout-only "ms"
and figures) with "process_ms", "peak_rss_kb" and "rc" added. Exit status:
the tool's, or 124 when it ran past TIMEOUT_S (it is killed).
"""
import json
import os
import subprocess
import sys
import threading
import time


def main():
    timeout = float(sys.argv[1])
    cmd = sys.argv[2:]
    t0 = time.perf_counter()
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=sys.stderr)
    killed = []
    timer = threading.Timer(timeout, lambda: (killed.append(1), p.kill()))
    timer.start()
    out = p.stdout.read()  # until the tool closes stdout (it exits)
    _, status, usage = os.wait4(p.pid, 0)
    wall = time.perf_counter() - t0
    timer.cancel()
    rc = 124 if killed else os.waitstatus_to_exitcode(status)
    line = {}
    for text in reversed(out.decode(errors="replace").splitlines()):
        if text.startswith("{"):
            line = json.loads(text)
            break
    line.update(process_ms=round(wall * 1000, 2), peak_rss_kb=usage.ru_maxrss, rc=rc)
    print(json.dumps(line))
    return rc


if __name__ == "__main__":
    sys.exit(main())
