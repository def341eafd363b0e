#!/usr/bin/env python3
"""A real run that stopped early is compared with dtypelint as of the same stage (D11).

Usage: stage_cut.py DTYPELINT SOURCE_ROOT
fixtures/oracle/real-runs/deepseek-v3-fsdp1-wrap-crash.json is what real_worker.py recorded
for the set-up `deepseek-v3 load=float16 peft=- fsdp1 bf16` (tests/oracle/DISAGREEMENTS.md
D11): FSDP1 raises at wrap (the float32 router in a float16 unit, D4), so its last snapshot is
the one after get_peft_model. real_differential.py writes the user's files of that set-up,
lints fixtures/oracle/deepseek-v3 (the config and tensor names of the same small model) and
compares: the dtypes must agree as of dtypelint's peft stage, although dtypelint's final
dtypes have the other units upcast by accelerate at shard (D7). The comparison against the
final dtypes is run too and must differ: a check that cannot fail proves nothing. No venv:
the real run is the recorded one."""
import json
import os
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import real_differential as rd  # noqa: E402

PINS = {"torch": "2.13.0", "transformers": "5.24.0", "peft": "0.21.2", "deepspeed": "0.19.8",
        "accelerate": "1.15.0", "trl": "1.16.0", "bitsandbytes": "0.50.2"}


def main():
    binary, root = sys.argv[1], sys.argv[2]
    runs = os.path.join(root, "fixtures", "oracle", "real-runs")
    with open(os.path.join(runs, "deepseek-v3-fsdp1-wrap-crash.json")) as f:
        r = json.load(f)
    s = dict(r["setup"], folder=os.path.join(root, "fixtures/oracle/deepseek-v3"))
    fails = 0
    with tempfile.TemporaryDirectory() as d:
        t = rd.lint(binary, s["folder"], rd.user_files(s, d, PINS))
    if "failed" in t:
        print(f"FAIL: dtypelint refused the set-up: {t['failed']}")
        return 1
    if list(r["stages"])[-1] != "peft" or r["error"]["stage"] != "wrap":
        print("FAIL: the recorded run does not stop at wrap")
        return 1
    tally = dict.fromkeys(("verdict", "error type", "final dtypes", "every tensor listed",
                           "tensors compared", "tensors differing"), 0)
    diffs, n = rd.compare(r, t, tally, s["arch"], s.get("quant"))
    open_diffs = [x for x in diffs if " (known: " not in x]
    if open_diffs or not tally["final dtypes"] or not tally["verdict"] or n < 20:
        print(f"FAIL: as of peft, {n} tensors compared: {open_diffs or diffs}")
        fails += 1
    else:
        print(f"ok: as of peft, both say FSDP1 raises and {n} tensors agree "
              f"({len(diffs)} known differences)")
    # the same real run against dtypelint's final dtypes, as the oracle compared before D11
    final = dict(r, stages={"step": r["stages"]["peft"]})
    tally = dict.fromkeys(tally, 0)
    diffs, _ = rd.compare(final, t, tally, s["arch"])
    if tally["final dtypes"]:
        print("FAIL: the final dtypes agree too: the stage cut is not what is tested")
        fails += 1
    else:
        print(f"ok: against the final dtypes it differs: {[x[:120] for x in diffs]}")
    # a tensor made at a later stage does not exist as of an earlier one
    early = rd.dtypes_as_of(t, "load")
    if not early or set(early) != set(rd.dtypes_as_of(t, "peft")) or \
            rd.dtypes_as_of(t, "step") is not t["dtypes"]:
        print("FAIL: dtypes_as_of: load, peft and step do not cut as expected")
        fails += 1
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
