"""Runs a command as a child in its own process group and measures it the
same way for every tool: wall time from spawn to exit, peak memory as the
largest sum of the resident sets of the command's processes (sampled every
0.2 s from /proc: a tool that forks workers, as HTA's parser pool does,
is charged for all of them at once) and the kernel's ru_maxrss of the
command (its largest single process, from wait4). Optional limits: a wall
time and a summed RSS above which the command's process group is killed
(what was measured until then is returned with the reason).
"""
import os
import signal
import subprocess
import threading
import time

PAGE = os.sysconf("SC_PAGE_SIZE")


def group_rss_bytes(pgid):
    """Summed RSS of the processes in process group `pgid`."""
    total = 0
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % name, "rb") as f:
                stat = f.read().decode("ascii", "replace")
        except OSError:
            continue
        # Fields after the command name (which may hold spaces) in parens.
        rest = stat[stat.rfind(")") + 2:].split()
        if int(rest[2]) == pgid:  # field 5, pgrp
            total += int(rest[21]) * PAGE  # field 24, rss in pages
    return total


def run_measured(cmd, timeout_s=None, rss_limit_bytes=None, env=None, progress=None):
    """Returns a dict: rc, wall_s, cpu_s (user + system of the command and
    the children it waited for), peak_rss_bytes (summed, sampled),
    maxrss_bytes (wait4), stdout, stderr, killed (None or the reason),
    and stderr_lines as (seconds since start, line)."""
    t0 = time.perf_counter()
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
                         start_new_session=True)
    out_chunks, err_lines = [], []

    def read_out():
        for chunk in iter(lambda: p.stdout.read(65536), b""):
            out_chunks.append(chunk)

    def read_err():
        for line in iter(p.stderr.readline, b""):
            text = line.decode("utf-8", "replace").rstrip("\n")
            err_lines.append((time.perf_counter() - t0, text))
            if progress:
                progress(text)

    threads = [threading.Thread(target=read_out, daemon=True),
               threading.Thread(target=read_err, daemon=True)]
    for t in threads:
        t.start()
    peak, killed = 0, None
    status = None
    while True:
        pid, st, ru = os.wait4(p.pid, os.WNOHANG)
        if pid == p.pid:
            status, rusage = st, ru
            break
        try:
            peak = max(peak, group_rss_bytes(p.pid))
        except OSError:
            pass
        elapsed = time.perf_counter() - t0
        if killed is None and timeout_s is not None and elapsed > timeout_s:
            killed = "wall time over %.0f s" % timeout_s
        if killed is None and rss_limit_bytes is not None and peak > rss_limit_bytes:
            killed = "memory over %.1f GB (summed RSS)" % (rss_limit_bytes / 1e9)
        if killed is not None:
            try:
                os.killpg(p.pid, signal.SIGKILL)  # the group this call started
            except ProcessLookupError:
                pass
        time.sleep(0.2)
    wall = time.perf_counter() - t0
    # Workers that outlived the leader (a killed pool) go with the group.
    try:
        os.killpg(p.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    for t in threads:
        t.join(timeout=5)
    p.returncode = os.waitstatus_to_exitcode(status)
    return {"rc": p.returncode, "wall_s": wall, "cpu_s": rusage.ru_utime + rusage.ru_stime, "peak_rss_bytes": max(peak, rusage.ru_maxrss * 1024),
            "maxrss_bytes": rusage.ru_maxrss * 1024, "killed": killed,
            "stdout": b"".join(out_chunks).decode("utf-8", "replace"),
            "stderr": "\n".join(line for _, line in err_lines), "stderr_lines": err_lines}


def mb(n):
    return "%.0f MB" % (n / 1e6)
