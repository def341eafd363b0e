#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""dtypelint benchmark suite (issue 6): wall time, instructions and peak RSS beside `jq empty`.

    python3 tests/bench/run.py BUILD/dtypelint [--bench-safetensors BUILD/tests/bench/bench-safetensors]
        [--sizes 10k,100k[,1M]] [--runs 5] [--instructions] [--work DIR] [--out FILE]

or `meson test -C build --benchmark` (which runs the default set). Manifests come from
tests/bench/gen_moe_manifest.py (DeepSeek-V3 shaped, 61 layers; --experts sets the size):
JSON and YAML, every --plan, with and without --lora, cached in --work (default
/tmp/dtl-bench). Each case runs the full pipeline with text output to /dev/null:

  wall    median of --runs runs (time.perf_counter around the process)
  rss     peak resident set of the median run (wait4's ru_maxrss)
  instr   instructions of one run under valgrind --tool=callgrind (perf has no PMU on
          this VM); only with --instructions, and not for 1M (100k: ~30 s each)
  jq      median wall of `jq empty` on the same file (for YAML: on its JSON twin), its runs
          interleaved with dtypelint's so that a busy machine slows both alike
  run by run  the median of dtypelint's time / jq's over pairs of runs made one after the
          other: steadier than the ratio of the medians on a VM whose speed moves from
          minute to minute; the targets are checked on it

and then checks the issue's targets. Standard library only (the generator needs PyYAML for
YAML: python3-yaml).
"""
import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
GEN = os.path.join(HERE, "gen_moe_manifest.py")
ST_GEN = os.path.join(HERE, "gen_safetensors_folder.py")
# --experts for about 10k, 100k and 1M tensors with 61 layers: 61 * (3E + 12) + 4
EXPERTS = {"10k": 51, "100k": 541, "1M": 5461}


def run_once(argv, stdout=subprocess.DEVNULL):
    """(seconds, peak RSS in KiB, exit status) of one run."""
    start = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=stdout, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    elapsed = time.perf_counter() - start
    return elapsed, usage.ru_maxrss, os.waitstatus_to_exitcode(status)


def median(values):
    ordered = sorted(values)
    return ordered[len(ordered) // 2]


def interleaved_runs(argvs, runs):
    """[[(wall, RSS) of each run, in order]] for each argv, runs interleaved so that a busy
    machine slows them alike."""
    results = [[] for _ in argvs]
    for _ in range(runs):
        for k, argv in enumerate(argvs):
            wall, rss, status = run_once(argv)
            if status not in (0, 1):
                sys.exit(f"{' '.join(argv)}: exit status {status}")
            results[k].append((wall, rss))
    return results


def median_runs(argvs, runs):
    """[(median wall, RSS of the median run)] for each argv, runs interleaved."""
    return [median(r) for r in interleaved_runs(argvs, runs)]


def paired_ratio(a, b):
    """The median of a[i] / b[i] over runs made one after the other: on a VM whose speed moves
    from minute to minute this is steadier than the ratio of the medians."""
    return median([x[0] / y[0] for x, y in zip(a, b)])


def median_run(argv, runs):
    return median_runs([argv], runs)[0]


def instructions(argv):
    with tempfile.NamedTemporaryFile() as out:
        r = subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out.name}"] + argv,
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    m = re.search(r"Collected : (\d+)", r.stderr)
    return int(m.group(1)) if m else None


def generate(work, size, fmt, plan, lora):
    name = f"moe-{size}-{plan}{'-lora' if lora else ''}.{fmt}"
    path = os.path.join(work, name)
    if not os.path.exists(path):
        argv = [sys.executable, GEN, "--experts", str(EXPERTS[size]), "--plan", plan, "--format", fmt]
        if lora:
            argv.append("--lora")
        with open(path + ".tmp", "w") as f:
            subprocess.run(argv, stdout=f, check=True)
        os.rename(path + ".tmp", path)
    return path


def with_patterns(work, src, count):
    """src (a JSON manifest) with count keep_in_fp32, frozen and suppress entries each."""
    import json
    path = os.path.join(work, os.path.basename(src).replace(".json", f"-patterns{count}.json"))
    if not os.path.exists(path):
        with open(src) as f:
            m = json.load(f)
        # names that exist (the router of layer i % 61) and names that do not; frozen globs
        # of every shape the set indexes: literal prefixes, a wildcard layer, '**' prefixes
        m["model"]["keep_in_fp32"] = [f"mlp.gate_{i}" if i % 2 else f"experts.{i}.up_proj"
                                      for i in range(count)]
        frozen = []
        for i in range(count):
            kind = i % 4
            if kind == 0:
                frozen.append(f"model.layers.{i % 61}.mlp.experts.{i}.**")
            elif kind == 1:
                frozen.append(f"model.layers.*.mlp.experts.{i}.down_proj.weight")
            elif kind == 2:
                frozen.append(f"**.experts.{i}.gate_proj.weight")
            else:
                frozen.append(f"model.extra_{i}.**")
        m["frozen"] = frozen
        m["suppress"] = [{"rule": "DT202", "tensors": f"model.layers.{i}.**", "reason": "benchmark"}
                         for i in range(count)]
        with open(path, "w") as f:
            json.dump(m, f, indent=1)
    return path


def mib(kib):
    return kib / 1024.0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("dtypelint")
    ap.add_argument("--bench-safetensors", help="the bench-safetensors binary (model folder case)")
    ap.add_argument("--sizes", default="10k,100k")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--instructions", action="store_true")
    ap.add_argument("--work", default=os.environ.get("DTL_BENCH_DIR", "/tmp/dtl-bench"))
    ap.add_argument("--out")
    a = ap.parse_args()
    os.makedirs(a.work, exist_ok=True)
    sizes = a.sizes.split(",")
    have_jq = shutil.which("jq") is not None
    lines = []

    def say(s=""):
        print(s, flush=True)
        lines.append(s)

    say(f"dtypelint benchmark: {a.dtypelint}, median of {a.runs} runs, {os.cpu_count()} CPUs")
    say()
    say("| tensors | format | plan | lora | file MiB | wall s | jq s | wall/jq | run by run | peak RSS MiB | RSS/file | instructions |")
    say("|---|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    results = {}
    for size in sizes:
        for fmt in ("json", "yaml"):
            for plan in ("fsdp2", "fsdp1", "zero3"):
                for lora in (False, True):
                    if size == "1M" and (lora or (fmt == "yaml" and plan != "fsdp2")):
                        continue  # 1M: every plan in JSON, fsdp2 in YAML (PyYAML is slow)
                    path = generate(a.work, size, fmt, plan, lora)
                    twin = generate(a.work, size, "json", plan, lora)
                    jq = paired = None
                    if have_jq:
                        ours, theirs = interleaved_runs(
                            [[a.dtypelint, path], ["jq", "empty", twin]], a.runs)
                        (wall, rss), (jq, _) = median(ours), median(theirs)
                        paired = paired_ratio(ours, theirs)
                    else:
                        wall, rss = median_run([a.dtypelint, path], a.runs)
                    ins = (instructions([a.dtypelint, path])
                           if a.instructions and size != "1M" else None)
                    size_mib = os.path.getsize(path) / 1048576.0
                    results[(size, fmt, plan, lora)] = (wall, rss, jq, size_mib, paired)
                    say(f"| {size} | {fmt} | {plan} | {'yes' if lora else 'no'} | {size_mib:.1f} | "
                        f"{wall:.3f} | {jq:.3f} | {wall / jq:.2f} | {paired:.2f} | {mib(rss):.1f} | "
                        f"{mib(rss) / size_mib:.1f} | {ins if ins else '-'} |"
                        if jq else
                        f"| {size} | {fmt} | {plan} | {'yes' if lora else 'no'} | {size_mib:.1f} | "
                        f"{wall:.3f} | - | - | - | {mib(rss):.1f} | {mib(rss) / size_mib:.1f} | "
                        f"{ins if ins else '-'} |")

    # patterns: 1,000 keep_in_fp32 + 1,000 frozen + 1,000 suppress entries against none
    pattern_ratio = None
    if "100k" in sizes:
        base = generate(a.work, "100k", "json", "fsdp2", False)
        many = with_patterns(a.work, base, 1000)
        none, some = interleaved_runs([[a.dtypelint, base], [a.dtypelint, many]], a.runs)
        (w0, _), (w1, _) = median(none), median(some)
        pattern_ratio = paired_ratio(some, none)
        say()
        say(f"patterns: 100k JSON fsdp2 {w0:.3f} s; with 1,000 keep_in_fp32 + 1,000 frozen + "
            f"1,000 suppress entries {w1:.3f} s: {(pattern_ratio - 1) * 100:+.0f} %")

    # the model-folder case: 60 sparse shards, 100k tensors (headers only)
    st_time = None
    if a.bench_safetensors:
        folder = os.path.join(a.work, "moe-folder")
        if not os.path.exists(os.path.join(folder, "config.json")):
            subprocess.run([sys.executable, ST_GEN, folder, "--shards", "60", "--tensors", "100000"],
                           check=True, stdout=subprocess.DEVNULL)
        out = subprocess.run([a.bench_safetensors, folder, str(a.runs)], check=True,
                             capture_output=True, text=True).stdout
        m = re.search(r"best of \d+: ([\d.]+) ms", out)
        st_time = float(m.group(1)) / 1000 if m else None
        say()
        say("safetensors folder (headers of 60 sparse shards, 100k tensors): " + " / ".join(out.strip().splitlines()))

    # the targets
    say()
    say("targets (issue 6):")
    def check(what, ok, detail):
        say(f"- [{'x' if ok else ' '}] {what}: {detail}")
    r = results.get(("100k", "json", "fsdp2", False))
    if r and r[2]:
        check("100k JSON < 0.5 x jq", r[4] < 0.5,
              f"{r[0]:.3f} s vs jq {r[2]:.3f} s (medians: {r[0] / r[2]:.2f} x; run by run: {r[4]:.2f} x)")
    ry = results.get(("100k", "yaml", "fsdp2", False))
    if ry and ry[2]:
        check("100k YAML < 1 x jq on the JSON twin", ry[4] < 1,
              f"{ry[0]:.3f} s vs {ry[2]:.3f} s (medians: {ry[0] / ry[2]:.2f} x; run by run: {ry[4]:.2f} x)")
    r1 = results.get(("1M", "json", "fsdp2", False))
    if r and r1:
        check("1M <= 11 x 100k", r1[0] <= 11 * r[0], f"{r1[0]:.3f} s = {r1[0] / r[0]:.1f} x")
    for key in (("100k", "json", "fsdp2", False), ("1M", "json", "fsdp2", False)):
        if key in results:
            w, rss, _, size_mib, _ = results[key]
            check(f"{key[0]} peak RSS <= 4 x file", mib(rss) <= 4 * size_mib,
                  f"{mib(rss):.1f} MiB for {size_mib:.1f} MiB ({mib(rss) / size_mib:.1f} x)")
    if pattern_ratio:
        check("1,000 patterns add < 20 %", pattern_ratio < 1.2, f"{(pattern_ratio - 1) * 100:+.0f} %")
    if st_time is not None:
        check("100k-tensor model folder < 0.5 s", st_time < 0.5, f"{st_time:.3f} s")
    if a.out:
        with open(a.out, "w") as f:
            f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
