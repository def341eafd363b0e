#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""tools/gen-behaviors.c, which writes the behaviour enum from rules/versions.yaml: it accepts
the real file, and stops the build on each broken copy of it with FILE:LINE:COL: error: and
the reason, writing nothing.

usage: generator.py DTL_GEN_BEHAVIORS VERSIONS_YAML
"""
import os
import re
import subprocess
import sys
import tempfile


def run(gen, text, folder):
    src = os.path.join(folder, "versions.yaml")
    enum_h, names_h = os.path.join(folder, "enum.h"), os.path.join(folder, "names.h")
    for path in (enum_h, names_h):
        if os.path.exists(path):
            os.unlink(path)
    with open(src, "w", encoding="utf-8") as f:
        f.write(text)
    p = subprocess.run([gen, src, enum_h, names_h], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, timeout=60)
    outputs = [open(x).read() if os.path.exists(x) else None for x in (enum_h, names_h)]
    return p.returncode, p.stderr.decode(), src, outputs


def main():
    gen, versions_path = sys.argv[1], sys.argv[2]
    text = open(versions_path, encoding="utf-8").read()
    lines = text.split("\n")
    top = lines.index("behaviours:")
    keys = []  # (line index, key) of every behaviour
    for i in range(top + 1, len(lines)):
        if lines[i] and not lines[i].startswith((" ", "#")):
            break
        m = re.match(r"^  ([a-z0-9-]+):$", lines[i])
        if m:
            keys.append((i, m.group(1)))
    first, key = keys[0]
    second = keys[1][0]
    entry = lines[first:second]  # the first behaviour, key line included
    fails = []

    def mutate(where, new_lines, drop=0):
        return "\n".join(lines[:where] + new_lines + lines[where + drop:])

    with tempfile.TemporaryDirectory(prefix="dtl-gen-") as folder:
        rc, err, _, (enum_h, names_h) = run(gen, text, folder)
        enums = re.findall(r"^\t(DTL_B_\w+), /\* ([a-z0-9-]+) \*/$", enum_h or "", re.M)
        if rc != 0:
            fails.append(f"the real rules/versions.yaml is refused: {err.strip()}")
        elif [k for _, k in enums] != [k for _, k in keys]:
            fails.append(f"the enum lists {len(enums)} behaviours, the file {len(keys)}, "
                         "or in another order")
        elif not re.search(r"^\tDTL_B_COUNT\n};", enum_h, re.M):
            fails.append("the enum does not end with DTL_B_COUNT")
        else:
            named = dict(re.findall(r"^\[(DTL_B_\w+)\] = \"([a-z0-9-]+)\",$", names_h, re.M))
            if named != {e: k for e, k in enums}:
                fails.append("the key table does not match the enum")
            derived = "DTL_B_" + key.upper().replace("-", "_")
            overrides = sum(1 for line in lines if line.startswith("    enum: "))
            if sum(1 for e, k in enums if e != "DTL_B_" + k.upper().replace("-", "_")) != \
                    overrides:
                fails.append("enum: does not rename exactly the entries that have one")
            print(f"{len(enums)} behaviours, {overrides} with an enum: name; first {key} "
                  f"-> {dict((k, e) for e, k in enums)[key]} (derived: {derived})")

        field = next(i for i in range(first + 1, second) if lines[i].startswith("    fact: "))
        since = next(i for i in range(first + 1, second) if lines[i].startswith("    since: "))
        oracle = next(i for i in range(since + 1, second) if lines[i].startswith("    oracle: "))
        cases = [
            # (what, text, the line the error must name, words it must hold)
            ("malformed YAML", mutate(second, ["  broken: \"unclosed", "    x: y"]), None,
             "malformed YAML"),
            ("a duplicate behaviour", mutate(keys[-1][0], entry), keys[-1][0] + 1,
             f"duplicate key '{key}' (first at line {first + 1})"),
            ("a duplicate field", mutate(field + 1, [lines[field]]), field + 2,
             "duplicate key 'fact'"),
            ("a misspelt field", mutate(field + 1, ["    untill: \"1.0\""]), field + 2,
             "unknown field 'untill'"),
            ("a missing field", mutate(field, [], drop=1), first + 2, f"'{key}' has no 'fact'"),
            # oracle: (tests/oracle/boundaries.py) says, per edge, shown or why not; the
            # entry's own oracle line is replaced
            ("an oracle in no known form", mutate(oracle, ['    oracle: "shown"'], drop=1),
             oracle + 1, "oracle is 'cannot: REASON' or clauses"),
            ("an oracle for an edge the entry lacks",
             mutate(oracle, ['    oracle: "until shown: torch 1 / 2"'], drop=1), oracle + 1,
             "oracle names its until but it has none"),
            ("an oracle naming an edge twice",
             mutate(oracle, ['    oracle: "since cannot: a; since todo: b"'], drop=1),
             oracle + 1, "oracle names its since twice"),
            ("an oracle silent on an edge",
             mutate(oracle, ['    until: "9.0"', '    oracle: "since cannot: a"'], drop=1),
             oracle + 2, "oracle says nothing of its until"),
            ("a boundary with no oracle", mutate(oracle, [], drop=1), first + 2,
             "has a boundary but no 'oracle'"),
            ("an oracle on a behaviour without since or until",
             "\n".join(lines[:since] + lines[since + 1:oracle] + ['    oracle: "cannot: a"'] +
                       lines[oracle + 1:]), oracle,
             "oracle is for a behaviour with a since or until"),
            ("a key that is no C name", mutate(first, ["  Bad_Key:"], drop=1), first + 1,
             "lower-case letters and digits"),
            ("two behaviours, one enum name",
             mutate(second + 1, ["    enum: DTL_B_" + key.upper().replace("-", "_")]),
             second + 2, "duplicate enum name"),
            ("an enum: that repeats the derived name",
             mutate(first + 1, ["    enum: DTL_B_" + key.upper().replace("-", "_")]), first + 2,
             "derived from the key"),
            ("an enum: that is no DTL_B_ name", mutate(first + 1, ["    enum: fsdp"]), first + 2,
             "must be DTL_B_"),
            ("the sentinel as an enum: name", mutate(first + 1, ["    enum: DTL_B_COUNT"]),
             first + 2, "DTL_B_COUNT is the number"),
            ("a behaviour that is no mapping", mutate(first + 1, [], drop=second - first - 1),
             None, "must be a mapping"),
            ("no behaviours", text.replace("\nbehaviours:\n", "\nbehaviors:\n", 1), None,
             "'behaviours' must be a mapping"),
            ("an empty file", "", None, "must be a mapping"),
        ]
        for what, broken, line, words in cases:
            rc, err, src, outputs = run(gen, broken, folder)
            m = re.match(re.escape(src) + r":(\d+):(\d+): error: (.*)$", err.strip())
            if rc == 0:
                fails.append(f"{what}: accepted")
            elif not m or words not in m.group(3):
                fails.append(f"{what}: want FILE:LINE:COL: error: ...{words}..., got {err!r}")
            elif line is not None and int(m.group(1)) != line:
                fails.append(f"{what}: error at line {m.group(1)}, want {line}: {err.strip()}")
            elif outputs != [None, None]:
                fails.append(f"{what}: wrote a header anyway")
            else:
                print(f"ok: {what}: {err.strip()}")
    for f in fails:
        print("FAIL: " + f)
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
