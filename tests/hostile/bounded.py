#!/usr/bin/env python3
"""Bounded reads (issue 21, requirement 6): --max-file-size holds for pipes as for files, and
devices are refused. Before the fix a pipe under a 1 MiB limit was read to 2 MiB, and /dev/zero
was read until 514 MiB of memory were taken, because the size was checked only when the buffer
was full. Usage: bounded.py DTYPELINT"""
import os
import resource
import subprocess
import sys

dtypelint = os.path.abspath(sys.argv[1])
failures = []


def check(name, ok, detail):
    print(("ok " if ok else "FAIL ") + name + ("" if ok else ": " + detail))
    if not ok:
        failures.append(name)


def children_peak_kib():
    return resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss


# 1. a device is no input: refused at once, nothing read
r = subprocess.run([dtypelint, "/dev/zero"], capture_output=True, timeout=60)
err = (r.stdout + r.stderr).decode(errors="replace")
check("dev-zero-refused", r.returncode == 2 and "not a regular file or a pipe" in err,
      f"exit {r.returncode}: {err[:200]}")
check("dev-zero-memory", children_peak_kib() < 200 * 1024,
      f"peak {children_peak_kib()} KiB")

# 2. a pipe over the limit: cut off one byte past it. The writer counts what the reader took.
p = subprocess.Popen([dtypelint, "--max-file-size", "1M", "/dev/stdin"], stdin=subprocess.PIPE,
                     stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
chunk = b" " * 4096
written = 0
try:
    while written < 64 << 20:
        p.stdin.write(chunk)
        p.stdin.flush()
        written += len(chunk)
except BrokenPipeError:
    pass
try:
    p.stdin.close()
except BrokenPipeError:
    pass
err = p.stdout.read().decode(errors="replace")
p.wait(timeout=60)
check("pipe-over-limit-refused", p.returncode == 2 and "over the limit of 1048576 bytes" in err,
      f"exit {p.returncode}: {err[:200]}")
# 1 MiB + 1 byte read, plus what the pipe buffers (64 KiB on Linux) and one chunk in flight
check("pipe-read-bounded", written <= (1 << 20) + 2 * 65536 + 4096,
      f"the reader took {written} bytes under a 1 MiB limit")

# 3. a pipe under the limit is read whole (an invalid manifest: exit 2 for its content)
r = subprocess.run([dtypelint, "--max-file-size", "1M", "/dev/stdin"],
                   input=b"format: 1\n" + b"#" * 1000 + b"\n", capture_output=True, timeout=60)
err = (r.stdout + r.stderr).decode(errors="replace")
check("pipe-under-limit-read", "over the limit" not in err and r.returncode == 2,
      f"exit {r.returncode}: {err[:200]}")

print(f"{len(failures)} failed")
sys.exit(1 if failures else 0)
