#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""The release workflow (.github/workflows/release.yml) as far as it can run here: it must be
valid YAML, run on vX.Y.Z tags, build the tarball, the sdist and the wheels, check them
(twine check, auditwheel show), write SHA256SUMS and attach them; the release notes it cuts
from CHANGELOG.md for this version must not be empty; LICENSE must be the license that the
package metadata (pyproject.toml, meson.build, debian/copyright) names.
usage: release.py SOURCE_ROOT VERSION
"""
import re
import subprocess
import sys

import yaml


def main():
    root = sys.argv[1]
    # X.Y.Z.postN (commits after the tag X.Y.Z) has X.Y.Z's notes
    version = re.match(r"\d+\.\d+\.\d+", sys.argv[2]).group(0)
    failures = []
    with open(f"{root}/.github/workflows/release.yml") as f:
        wf = yaml.safe_load(f)
    on = wf.get(True, wf.get("on"))  # YAML 1.1 reads the key `on` as true
    if "v[0-9]*" not in on["push"]["tags"]:
        failures.append("the workflow does not run on vX.Y.Z tags")
    text = yaml.safe_dump(wf)
    for need in ("meson dist", "build==", "cibuildwheel", "twine\" check\" --strict",
                 "auditwheel\" show", "sha256sum", "gh release create", "gh-action-pypi-publish"):
        if need.replace('"', "") not in text.replace('"', ""):
            failures.append(f"the workflow lacks {need!r}")
    # the notes: the same awk as the release job, on this version's section
    job = wf["jobs"]["release"]["steps"][-1]["run"]
    awk = re.search(r"awk (.*?) \\\n\s*CHANGELOG.md", job, re.S).group(1)
    notes = subprocess.run(["sh", "-c", f"version={version}; awk {awk} CHANGELOG.md"], cwd=root,
                           stdout=subprocess.PIPE, text=True, check=True).stdout
    if not notes.strip():
        failures.append(f"CHANGELOG.md has no section for {version}: the release notes are empty")
    with open(f"{root}/LICENSE") as f:
        license_text = f.read()
    with open(f"{root}/pyproject.toml") as f:
        pyproject = f.read()
    with open(f"{root}/meson.build") as f:
        meson = f.read()
    with open(f"{root}/debian/copyright") as f:
        copyright_ = f.read()
    if not license_text.startswith("MIT License"):
        failures.append("LICENSE is not the MIT license")
    if 'license = "MIT"' not in pyproject or "license: 'MIT'" not in meson:
        failures.append("pyproject.toml or meson.build does not name MIT")
    if "License: Expat" not in copyright_ or license_text.split("\n\n", 2)[2].split()[:8] != \
            copyright_.split("License: Expat\n", 2)[2].split()[:8]:
        failures.append("debian/copyright does not carry LICENSE's text")
    for f in failures:
        print("FAIL:", f)
    if not failures:
        print(f"ok: release.yml, the {version} notes ({len(notes.split())} words), LICENSE")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
