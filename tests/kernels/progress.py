#!/usr/bin/env python3
"""--scan-kernels progress (issue 22): on a terminal, standard error shows "scanning kernels:
N of M files" rewritten in place and wiped at the end; when standard error is not a terminal it
gets no byte of it. The terminal is a pty from util-linux `script`; skips (77) without it.

Usage: progress.py DTYPELINT SOURCE_ROOT TREE FILES EXPECTED_STDOUT
FILES is how many files the scanner finds in TREE; EXPECTED_STDOUT the golden stdout part."""
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile


def golden_stdout(path):
    """The stdout part of a tests/golden.sh case file (after its header, if it has one)."""
    with open(path, "rb") as f:
        data = f.read()
    if data.startswith(b"# args:"):
        data = data[data.index(b"\n--- stdout\n") + len(b"\n--- stdout\n"):]
    return data[:data.index(b"--- stderr\n")]


def main():
    dtypelint, root, tree, files, expected = sys.argv[1:6]
    dtypelint, files = os.path.abspath(dtypelint), int(files)
    os.chdir(root)
    want_stdout = golden_stdout(expected)
    failures = []

    # not a terminal: stderr is a file, and gets nothing
    run = subprocess.run([dtypelint, "--scan-kernels", tree], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, timeout=120)
    if run.returncode != 0:
        failures.append(f"no tty: exit {run.returncode}")
    if run.stderr != b"":
        failures.append(f"no tty: standard error is not empty: {run.stderr[:200]!r}")
    if run.stdout != want_stdout:
        failures.append("no tty: standard output differs from the golden scan-kernels")

    script = shutil.which("script")
    if not script:
        for f in failures:
            print("FAIL:", f)
        if failures:
            return 1
        print("SKIP: util-linux script is not installed (no pty to test the terminal case)")
        return 77
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "stdout")
        # stderr is the pty; stdout goes to a file, so the transcript is stderr alone
        command = (f"{shlex.quote(dtypelint)} --scan-kernels {shlex.quote(tree)} "
                   f">{shlex.quote(out)}")
        run = subprocess.run([script, "-qec", command, "/dev/null"], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, timeout=120)
        if run.returncode != 0:
            failures.append(f"tty: exit {run.returncode}: {run.stderr[:200]!r}")
        with open(out, "rb") as f:
            if f.read() != want_stdout:
                failures.append("tty: standard output differs from the golden scan-kernels")
    # byte for byte but for the frames the 100 ms throttle may leave out: each frame is
    # "\rscanning kernels: N of FILES files" with N rising, the last one FILES of FILES, then
    # the line is wiped with as many spaces as it had and the cursor goes back
    last = f"scanning kernels: {files} of {files} files".encode()
    frame = rb"\rscanning kernels: ([0-9]+) of " + str(files).encode() + rb" files"
    shape = re.compile(b"(?:" + frame + b")*" + b"\r" + re.escape(last) + b"\r" +
                       b" " * len(last) + b"\r")
    transcript = run.stdout
    if not shape.fullmatch(transcript):
        failures.append(f"tty: standard error is not the progress lines: {transcript[:300]!r}")
    else:
        counts = [int(n) for n in re.findall(frame, transcript)] + [files]
        if counts != sorted(counts) or counts[0] < 1:
            failures.append(f"tty: the counts do not rise from 1: {counts}")
    for f in failures:
        print("FAIL:", f)
    if not failures:
        print(f"ok: {len(re.findall(b'scanning', transcript))} progress frames on a pty, "
              "none without a terminal")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
