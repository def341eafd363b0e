#!/usr/bin/env python3
"""Two dtypelint binaries must answer alike: same stdout, stderr and exit status on every
fixture, golden, malformed and fuzz-corpus file of the tree, on mutations of the JSON and YAML
fixtures, and with --max-tensors 1/2/5. For speed work (tests/bench/README.md): build the old
tree beside the new one and run

    python3 tests/bench/compare_binaries.py OLD/dtypelint NEW/dtypelint [MUTATIONS]

It prints the first differences and a count; the exit status is 1 when any differ."""
import glob, os, random, subprocess, sys, tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def run(binary, path, extra=()):
    r = subprocess.run([binary, *extra, path], capture_output=True, cwd=os.path.dirname(path),
                       timeout=120)
    return r.returncode, r.stdout, r.stderr


def mutate(rng, data, alphabet):
    d = bytearray(data)
    k = rng.randrange(len(d))
    op = rng.randrange(4)
    if op == 0:
        d[k] = rng.choice(alphabet)
    elif op == 1:
        del d[k]
    elif op == 2:
        d.insert(k, rng.choice(alphabet))
    else:
        d[k:k] = d[rng.randrange(len(d)):][:20]
    return bytes(d)


def main():
    old, new = sys.argv[1], sys.argv[2]
    per_file = int(sys.argv[3]) if len(sys.argv) > 3 else 30
    rng = random.Random(11)
    texts = (".json", ".yaml", ".yml")
    files = sorted(f for f in glob.glob(ROOT + "/fixtures/**/*", recursive=True) if f.endswith(texts))
    files += sorted(f for f in glob.glob(ROOT + "/tests/**/*", recursive=True)
                    if f.endswith(texts) and os.path.isfile(f) and "/fuzz/corpus/" not in f)
    files += sorted(f for f in glob.glob(ROOT + "/tests/fuzz/corpus/*/*") if os.path.isfile(f))
    total = differ = 0

    def compare(path, extra=()):
        nonlocal total, differ
        total += 1
        a, b = run(old, path, extra), run(new, path, extra)
        if a != b:
            differ += 1
            if differ <= 8:
                print(f"DIFFER {path} {' '.join(extra)}: exit {a[0]} / {b[0]}\n"
                      f"  old: {(a[2] or a[1])[:300]!r}\n  new: {(b[2] or b[1])[:300]!r}")

    for f in files:
        compare(f)
    with tempfile.TemporaryDirectory() as tmp:
        for ext, alphabet in ((".json", b'{}[]",:\\ 0123456789-.eEtfn\x00\x01\n\r\t\x7f\xff'),
                              (".yaml", b'{}[]",:\\ 0123456789-.eEtfn&*!#\n\t-?|>')):
            sources = [f for f in files if f.endswith(ext) and "/fixtures/" in f][:60]
            for src in sources:
                data = open(src, "rb").read()
                if not data:
                    continue
                for _ in range(per_file):
                    p = os.path.join(tmp, "m" + ext)
                    with open(p, "wb") as out:
                        out.write(mutate(rng, data, alphabet))
                    compare(p)
        for f in [f for f in files if f.endswith(".json") and "/fixtures/" in f][:10]:
            for n in ("1", "2", "5"):
                compare(f, ("--max-tensors", n))
    print(f"{total} runs, {differ} differ")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
