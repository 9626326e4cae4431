#!/usr/bin/env python3
"""Exits 0 when every `name==version` pin of a requirements file (following `-r FILE`
includes) is installed at exactly that version in this interpreter, else prints what
differs and exits 1. scripts/setup.sh uses it to decide whether pip has work to do.

    .venv/bin/python scripts/check_requirements.py requirements.txt
"""
from __future__ import annotations

import importlib.metadata as metadata
import sys
from pathlib import Path


def pins(path: Path, seen: set[Path] | None = None) -> dict[str, str]:
    """{distribution name: version} of a requirements file and the files it includes."""
    seen = seen if seen is not None else set()
    path = path.resolve()
    if path in seen:
        return {}
    seen.add(path)
    out: dict[str, str] = {}
    for line in path.read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if line.startswith("-r "):
            out.update(pins(path.parent / line[3:].strip(), seen))
        elif "==" in line:
            name, version = (s.strip() for s in line.split("==", 1))
            out[name] = version
    return out


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    bad = []
    for name, want in pins(Path(argv[1])).items():
        try:
            have = metadata.version(name)
        except metadata.PackageNotFoundError:
            have = None
        if have != want:
            bad.append(f"{name}: want {want}, have {have or 'nothing'}")
    for b in bad:
        print(f"check_requirements: {b}", file=sys.stderr)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
