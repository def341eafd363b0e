"""python3 -m dtypelint export ...: the exporter's command line (see dtypelint.exporter)."""
import sys

from .exporter import main

if __name__ == "__main__":
    if sys.argv[1:2] != ["export"]:
        raise SystemExit("usage: python3 -m dtypelint export (--factory MOD:FN | --hf ID) OUT")
    raise SystemExit(main(sys.argv[2:]))
