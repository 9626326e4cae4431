"""Every third-party module a script or test in the repository imports is pinned.

The Python counterpart of ../shared/tools/apt-audit: a package that happens to be in
.venv because something else pulled it in (ml_dtypes with tensorflow, protobuf with
onnx) or that a developer installed by hand would pass here and fail on a fresh
machine. Each import of every tracked .py file is resolved to the distribution that
provides it in this interpreter, and that distribution must have an exact pin in
requirements.txt or requirements-core.txt (scripts/check_requirements.py reads both).
"""
from __future__ import annotations

import ast
import importlib.metadata as metadata
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "scripts"))

from check_requirements import pins  # noqa: E402


def tracked_python_files() -> list[Path]:
    out = subprocess.run(["git", "ls-files", "*.py"], cwd=REPO, capture_output=True, text=True, check=True)
    return [REPO / line for line in out.stdout.splitlines() if line]


def imported_top_level(path: Path) -> set[str]:
    names = set()
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            names.update(a.name.split(".")[0] for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module.split(".")[0])
    return names


def local_modules(files: list[Path]) -> set[str]:
    """Modules the repository itself provides: every .py stem and every package directory."""
    names = {p.stem for p in files} | {"ferry"}
    for p in files:
        names.update(part for part in p.relative_to(REPO).parts[:-1])
    return names


def normalize(name: str) -> str:
    return name.lower().replace("_", "-")


def test_every_imported_package_is_pinned():
    files = tracked_python_files()
    assert files, "git ls-files found no Python files"
    local = local_modules(files)
    providers = metadata.packages_distributions()
    pinned = {normalize(n) for n in pins(REPO / "requirements.txt")}
    unpinned = {}
    for path in files:
        for module in imported_top_level(path) - local - set(sys.stdlib_module_names) - {"__future__"}:
            dists = providers.get(module)
            if not dists:
                unpinned.setdefault(f"{module} (not installed in {sys.prefix})", []).append(path.name)
            elif not any(normalize(d) in pinned for d in dists):
                unpinned.setdefault(f"{module} (from {', '.join(dists)})", []).append(path.name)
    assert not unpinned, "imported but not pinned in requirements.txt / requirements-core.txt:\n" + "\n".join(
        f"  {m}: {', '.join(sorted(set(f)))}" for m, f in sorted(unpinned.items()))


def test_core_requirements_are_included():
    core = pins(REPO / "requirements-core.txt")
    full = pins(REPO / "requirements.txt")
    assert core and all(full.get(n) == v for n, v in core.items())
