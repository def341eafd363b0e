#!/usr/bin/env python3
"""Machine outputs stay valid and exports read back (issue 21, requirement 2):
- JSON, JSON Lines, SARIF and GitLab output are valid UTF-8 JSON whatever bytes a file name or
  a tensor name holds: invalid UTF-8 becomes U+FFFD, controls and U+2028/U+2029 are escaped;
- text and github output carry no raw control byte and no invalid UTF-8 (a lone 0x9b is CSI to
  a terminal in 8-bit mode);
- --export writes YAML and JSON that dtypelint reads back to the same findings, for names
  holding quotes, backslashes, NEL (a YAML line break), U+2028, BOM, DEL and C1 controls.
Usage: encodings.py DTYPELINT SOURCE_ROOT"""
import json
import os
import struct
import subprocess
import sys
import tempfile

dtypelint = os.path.abspath(sys.argv[1])
root = os.path.abspath(sys.argv[2])
failures = []


def check(name, ok, detail=""):
    print(("ok " if ok else "FAIL ") + name + ("" if ok else ": " + detail))
    if not ok:
        failures.append(name)


def run(args, cwd):
    return subprocess.run([dtypelint] + args, capture_output=True, timeout=120, cwd=cwd)


def json_docs(fmt, data):
    text = data.decode("utf-8")  # strict: invalid UTF-8 raises
    if fmt == "json-lines":
        return [json.loads(line) for line in text.splitlines() if line]
    return [json.loads(text)]


HOSTILE = b"\xff\x9b[31m\xe2\x80\xa8\xc2\x85\x1b]8;;x\x07"

with tempfile.TemporaryDirectory() as tmp:
    tmpb = tmp.encode()
    # 1. a manifest whose file name is hostile bytes
    with open(os.path.join(root, "fixtures/rules/dt101-fires.yaml"), "rb") as f:
        manifest = f.read()
    name = b"m" + HOSTILE + b".yaml"
    with open(os.path.join(tmpb, name), "wb") as f:
        f.write(manifest)
    for fmt in ("json", "json-lines", "sarif", "gitlab"):
        r = run(["-f", fmt, name], tmpb)
        try:
            docs = json_docs(fmt, r.stdout)
            check(f"file-name {fmt}", r.returncode == 1 and docs, f"exit {r.returncode}")
        except (UnicodeDecodeError, json.JSONDecodeError) as e:
            check(f"file-name {fmt}", False, f"{e}: {r.stdout[:120]!r}")
    for fmt in ("text", "github"):
        r = run(["-f", fmt, name], tmpb)
        out = r.stdout + r.stderr
        raw = [b for b in (b"\x1b", b"\x9b", b"\x07", b"\xff") if b in out]
        try:
            out.decode("utf-8")
            valid = True
        except UnicodeDecodeError:
            valid = False
        check(f"file-name {fmt}", r.returncode == 1 and not raw and valid,
              f"exit {r.returncode}, raw {raw}, utf-8 {valid}")

    # 2. an HF folder whose safetensors header names a tensor with hostile bytes
    folder = os.path.join(tmp, "hf")
    os.mkdir(folder)
    with open(os.path.join(root, "fixtures/import/tiny-qwen2/config.json"), "rb") as f:
        config = f.read()
    with open(os.path.join(folder, "config.json"), "wb") as f:
        f.write(config)
    header = (b'{"model.layers.0.' + HOSTILE.replace(b"\x1b]8;;x\x07", b"") +
              b'.weight": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]}, '
              b'"model.norm.weight": {"dtype": "BF16", "shape": [2], "data_offsets": [8, 12]}}')
    with open(os.path.join(folder, "model.safetensors"), "wb") as f:
        f.write(struct.pack("<Q", len(header)) + header + b"\0" * 12)
    r = run(["-f", "json", "--fsdp1", "hf"], tmp)
    if r.returncode == 2:
        # refused by the header parser: then the message itself must be clean
        check("header-name refused cleanly", b"\x9b" not in r.stderr and b"\xff" not in r.stderr,
              repr(r.stderr[:200]))
    else:
        try:
            json_docs("json", r.stdout)
            check("header-name json", True)
        except (UnicodeDecodeError, json.JSONDecodeError) as e:
            check("header-name json", False, f"{e}: {r.stdout[:200]!r}")

    # 3. --export reads back, in YAML and JSON
    names = ['q"uote', "back\\slash", "nel\u0085line", "ls\u2028sep", "bom\ufeff",
             "del\x7f", "c1\u009b", "tab\tname", "colon: x", "# hash", "- dash", "&anchor",
             "!tag", "{flow}", "[seq]", "emoji\U0001F600", "\u202eltr"]
    tensors = [{"name": f"model.layers.0.{n}.weight", "dtype": "float32", "shape": [4]}
               for n in names]
    tensors.append({"name": "model.layers.0.norm.weight", "dtype": "bfloat16", "shape": [4]})
    doc = {"dtypelint": 1,
           "model": {"checkpoint_dtype": "bfloat16", "modules": {"model.layers.*": "Layer"},
                     "no_split_modules": ["Layer"]},
           "tensors": tensors, "training": {"strategy": "fsdp1", "world_size": 2,
                                            "versions": {"torch": "2.4"}}}
    src = os.path.join(tmp, "names.json")
    with open(src, "w", encoding="utf-8") as f:
        json.dump(doc, f, ensure_ascii=False)
    base = run(["-f", "json", src], tmp)
    try:
        want = [(x["rule"], x["message"]) for x in json.loads(base.stdout)["findings"]]
        check("export source has findings", len(want) > 0, repr(base.stdout[:200]))
    except (ValueError, KeyError) as e:
        want = None
        check("export source lints", False, f"{e}: {base.stderr[:200]!r}")
    for ext in ("yaml", "json"):
        out = os.path.join(tmp, "export." + ext)
        r = run(["--export", out, src], tmp)
        r2 = run(["-f", "json", out], tmp)
        try:
            got = [(x["rule"], x["message"]) for x in json.loads(r2.stdout)["findings"]]
        except (ValueError, KeyError) as e:
            got = f"{e}: {r2.stderr[:300]!r}"
        check(f"export {ext} reads back", want is not None and got == want,
              f"{got} != {want}")

print(f"{len(failures)} failed")
sys.exit(1 if failures else 0)
