# SPDX-License-Identifier: MIT
"""Real-extension test of the kernel scanner (issue 9).

Builds tests/kernels/data/real/ext.cpp against the installed libtorch (Debian python3-torch /
libtorch-dev), asks dtypelint's scanner (the kernels-predict helper) what each op does with each
dtype, calls every op with every dtype, and checks that torch raises exactly where and what the
scanner predicts: a predicted rejection must raise with the predicted message, a predicted
acceptance must not raise.

usage: real-ext.py PREDICTOR SOURCE_DIR
exit 0 pass, 1 fail, 77 skip (no torch, no headers or no C++ compiler).
"""
import os
import shutil
import subprocess
import sys
import tempfile

SKIP = 77

# torch dtype names as kernels-predict prints them (dtypelint's names)
DTYPES = ["float32", "float64", "float16", "bfloat16", "uint8", "int8", "int16", "int32",
          "int64", "bool"]

# Every op of ext.cpp, with how many dtypes the scanner must reject (a scanner that finds
# nothing predicts "unknown" everywhere and fails here, not silently passes).
EXPECTED_REJECTIONS = {
    "dtl_real::disp_half": 7,
    "dtl_real::disp_bf16": 6,
    "dtl_real::disp_all": 3,
    "dtl_real::check_float": 9,
    "dtl_real::check_alias": 8,
    "dtl_real::no_msg": 9,
    "dtl_real::accessor_float": 9,
    "dtl_real::wrapper": 7,
    "dtl_real::deep": 8,
    "dtl_real::branch": 8,
    "dtl_real::switchop": 8,
    "dtl_real::not_double": 1,
    "dtl_real::need_half": 9,
    "dtl_real::floating": 6,
    "dtl_real::dual": 5,
}


def skip(why):
    print("SKIP: " + why)
    sys.exit(SKIP)


def main():
    if len(sys.argv) != 3:
        print(__doc__)
        return 2
    predictor, source_dir = sys.argv[1], sys.argv[2]
    try:
        import torch
        import torch.utils.cpp_extension as cpp_extension
    except Exception as e:  # noqa: BLE001 - any import failure means "no torch here"
        skip("torch is not importable by %s (%s); install python3-torch" % (sys.executable, e))

    includes = [p for p in cpp_extension.include_paths() if os.path.isdir(p)]
    includes += ["/usr/include"]
    if not any(os.path.exists(os.path.join(p, "torch", "library.h")) for p in includes):
        skip("torch/library.h not found in %s; install libtorch-dev" % includes)
    cxx = os.environ.get("CXX") or shutil.which("c++") or shutil.which("g++")
    if not cxx:
        skip("no C++ compiler (c++ / g++) on PATH")
    libdirs = [p for p in cpp_extension.library_paths() if os.path.isdir(p)]

    # 1. the prediction
    out = subprocess.run([predictor, source_dir], capture_output=True, text=True, check=False)
    if out.returncode != 0:
        print("kernels-predict failed: %s" % out.stderr)
        return 1
    predictions = {}
    for line in out.stdout.splitlines():
        op, dtype, verdict, where, message = line.split("\t", 4)
        predictions[(op, dtype)] = (verdict, where, message)
    failures = []
    for op, want in sorted(EXPECTED_REJECTIONS.items()):
        got = sum(1 for d in DTYPES if predictions.get((op, d), ("",))[0] == "rejects")
        if got != want:
            failures.append("%s: %d dtypes predicted to raise, expected %d" % (op, got, want))

    # 2. the real extension
    build = tempfile.mkdtemp(prefix="dtl-real-ext-")
    try:
        lib = os.path.join(build, "dtl_real_ext.so")
        abi = int(getattr(torch._C, "_GLIBCXX_USE_CXX11_ABI", True))
        cmd = [cxx, "-std=c++17", "-O0", "-g0", "-fPIC", "-shared", "-w",
               "-D_GLIBCXX_USE_CXX11_ABI=%d" % abi, "-I" + source_dir]
        cmd += ["-I" + p for p in includes]
        cmd += [os.path.join(source_dir, "ext.cpp"), "-o", lib]
        cmd += ["-L" + p for p in libdirs] + ["-lc10", "-ltorch_cpu"]
        built = subprocess.run(cmd, capture_output=True, text=True, check=False)
        if built.returncode != 0:
            print("building the extension failed:\n" + " ".join(cmd) + "\n" + built.stderr[-4000:])
            return 1
        torch.ops.load_library(lib)

        checked = 0
        for (op, dtype), (verdict, where, message) in sorted(predictions.items()):
            ns, name = op.split("::")
            fn = getattr(getattr(torch.ops, ns), name)
            x = torch.ones(4, dtype=getattr(torch, dtype))
            try:
                fn(x)
                raised = None
            except RuntimeError as e:
                raised = str(e).splitlines()[0] if str(e) else ""
            if verdict == "rejects":
                if raised is None:
                    failures.append("%s(%s): predicted to raise at %s, did not" % (op, dtype, where))
                elif raised != message:
                    failures.append("%s(%s): torch raised %r, predicted %r (%s)"
                                    % (op, dtype, raised, message, where))
            elif verdict == "accepts":
                if raised is not None:
                    failures.append("%s(%s): predicted to pass, torch raised %r"
                                    % (op, dtype, raised))
            else:
                failures.append("%s(%s): verdict %s, expected rejects or accepts"
                                % (op, dtype, verdict))
            checked += 1
    finally:
        shutil.rmtree(build, ignore_errors=True)

    for f in failures:
        print("FAIL: " + f)
    print("%d op/dtype pairs checked against torch %s, %d failures"
          % (checked, torch.__version__, len(failures)))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
