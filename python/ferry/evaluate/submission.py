"""Submission directories: submission.toml (docs/evaluate.md, "Submissions").

    format = 1
    kind = "plugin"                  # plugin | python | model
    [plugin]  source = "plugin"      # CMake project, built by the harness; library = "libmy_kernel.so"
              prebuilt = "lib.so"    # or a library built elsewhere (no build, so no lint and no ctest)
    [python]  module = "python/model.py", class = "Model"
    [model]   path = "model.onnx"    # any model ferry loads (migration track)
    [tests]   command = [...]        # optional: replaces the default test command

Without submission.toml the kind is guessed: plugin/CMakeLists.txt or
CMakeLists.txt -> plugin; model.py -> python; one .onnx/.pt2 file or a
SavedModel directory -> model.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from .task import EvaluateError, Table, read_toml

SUBMISSION_FORMAT = 1
SUBMISSION_FILE = "submission.toml"
KINDS = ("plugin", "python", "model")


@dataclass
class Submission:
    dir: Path
    kind: str
    file: Path | None = None
    plugin_source: Path | None = None
    plugin_library: str = ""  # file name of the built library ("" = the only one built)
    prebuilt: Path | None = None  # a library used as is
    module: Path | None = None
    class_name: str = "Model"
    init: dict | None = None  # None: the baseline's
    model: Path | None = None
    signature: str = ""
    test_command: list | None = None
    library: Path | None = None  # set once built
    build_log: str = ""
    build_warnings: list = field(default_factory=list)

    def describe(self):
        if self.kind == "plugin":
            return f"kernel plugin ({self.prebuilt or self.plugin_source})"
        if self.kind == "python":
            return f"Python module {self.module} ({self.class_name})"
        return f"model {self.model} run by ferry"


def _guess(sub_dir):
    if (sub_dir / "plugin" / "CMakeLists.txt").is_file():
        return Submission(dir=sub_dir, kind="plugin", plugin_source=sub_dir / "plugin")
    if (sub_dir / "CMakeLists.txt").is_file():
        return Submission(dir=sub_dir, kind="plugin", plugin_source=sub_dir)
    for m in (sub_dir / "model.py", sub_dir / "python" / "model.py"):
        if m.is_file():
            return Submission(dir=sub_dir, kind="python", module=m)
    models = sorted(list(sub_dir.glob("*.onnx")) + list(sub_dir.glob("*.pt2")))
    if (sub_dir / "saved_model.pb").is_file():
        models.append(sub_dir)
    if len(models) == 1:
        return Submission(dir=sub_dir, kind="model", model=models[0])
    raise EvaluateError(
        f"no {SUBMISSION_FILE}, and the kind cannot be guessed (no plugin/CMakeLists.txt, no model.py, "
        f"not exactly one model file); write one with `ferry evaluate --init DIR --task TASK_DIR`",
        sub_dir,
    )


def load_submission(sub_dir):
    sub_dir = Path(sub_dir)
    if not sub_dir.is_dir():
        raise EvaluateError("not a submission directory (no such directory)", sub_dir)
    file = sub_dir / SUBMISSION_FILE
    if not file.is_file():
        return _guess(sub_dir)
    root = Table(read_toml(file), "submission", file)
    fmt = root.int("format", required=True)
    if fmt != SUBMISSION_FORMAT:
        raise EvaluateError(f"format = {fmt}: this ferry reads submission format {SUBMISSION_FORMAT}", file)
    kind = root.str("kind", required=True, choices=KINDS)
    root.str("team", "")
    root.str("title", "")
    s = Submission(dir=sub_dir, kind=kind, file=file)
    p = root.table("plugin")
    s.plugin_source = sub_dir / p.str("source", "plugin")
    s.plugin_library = p.str("library", "")
    pre = p.str("prebuilt")
    s.prebuilt = (sub_dir / pre) if pre else None
    p.done()
    py = root.table("python")
    s.module = sub_dir / py.str("module", "python/model.py")
    s.class_name = py.str("class", "Model")
    init = py.raw("init")
    if init is not None and not isinstance(init, dict):
        raise EvaluateError("python.init must be a table of keyword arguments", file)
    s.init = init
    py.done()
    m = root.table("model")
    mp = m.str("path")
    s.model = (sub_dir / mp) if mp else None
    s.signature = m.str("signature", "")
    m.done()
    t = root.table("tests")
    cmd = t.list("command")
    if cmd is not None and (not cmd or not all(isinstance(c, str) for c in cmd)):
        raise EvaluateError("tests.command must be a non-empty list of strings", file)
    s.test_command = cmd
    t.done()
    root.done()
    if kind == "plugin" and s.prebuilt is not None:
        if not s.prebuilt.is_file():
            raise EvaluateError(f"plugin.prebuilt: {s.prebuilt} does not exist", file)
    elif kind == "plugin" and not (s.plugin_source / "CMakeLists.txt").is_file():
        raise EvaluateError(f"kind = \"plugin\" but {s.plugin_source}/CMakeLists.txt does not exist", file)
    if kind == "python" and not s.module.is_file():
        raise EvaluateError(f"kind = \"python\" but the module {s.module} does not exist", file)
    if kind == "model":
        if s.model is None:
            raise EvaluateError("kind = \"model\" needs [model] path = \"...\"", file)
        if not s.model.exists():
            raise EvaluateError(f"kind = \"model\" but {s.model} does not exist", file)
    return s


def find_include_dir():
    """The directory holding ferry/kernel_plugin.h: $FERRY_INCLUDE_DIR, the package's, or the checkout's."""
    here = Path(__file__).resolve().parent.parent  # python/ferry or site-packages/ferry
    candidates = [os.environ.get("FERRY_INCLUDE_DIR"), here / "include", here.parent.parent / "include"]
    for c in candidates:
        if c and (Path(c) / "ferry" / "kernel_plugin.h").is_file():
            return Path(c).resolve()
    raise EvaluateError("cannot find ferry/kernel_plugin.h (set FERRY_INCLUDE_DIR to ferry's include/ directory)")


def find_source_dir():
    """A ferry checkout (its src/ and include/), for plugins that compile ferry's own kernels
    (tasks/flash_attention/example_submission): $FERRY_SOURCE_DIR, else the checkout this
    package runs from; None for an installed package."""
    here = Path(__file__).resolve().parent.parent.parent.parent  # <checkout>/python/ferry/evaluate
    for c in (os.environ.get("FERRY_SOURCE_DIR"), here):
        if c and (Path(c) / "src" / "backends").is_dir() and (Path(c) / "include" / "ferry").is_dir():
            return Path(c).resolve()
    return None


def plugin_env(env=None):
    """The environment of a plugin's build and tests: FERRY_SOURCE_DIR when there is a checkout."""
    env = dict(os.environ if env is None else env)
    src = find_source_dir()
    if src is not None:
        env.setdefault("FERRY_SOURCE_DIR", str(src))
    return env


WARNING = re.compile(r"\bwarning:")


def build_plugin(sub, build_dir, log, jobs=2, timeout_s=900):
    """Configures and builds the plugin's CMake project in build_dir; sets sub.library.

    Compiler warnings under -Wall -Wextra are kept (sub.build_warnings) for the
    lint check. A failed build is an EvaluateError with the end of the log.
    """
    if not shutil.which("cmake"):
        raise EvaluateError("building a kernel plugin needs cmake on PATH (apt-get install cmake)")
    build_dir = Path(build_dir)
    build_dir.mkdir(parents=True, exist_ok=True)
    include = find_include_dir()
    configure = ["cmake", "-S", str(sub.plugin_source), "-B", str(build_dir), "-DCMAKE_BUILD_TYPE=Release",
                 f"-DFERRY_INCLUDE_DIR={include}", "-DCMAKE_C_FLAGS=-Wall -Wextra", "-DCMAKE_CXX_FLAGS=-Wall -Wextra"]
    if shutil.which("ninja") and not (build_dir / "CMakeCache.txt").exists():
        configure += ["-G", "Ninja"]
    # A clean rebuild each time, so every warning shows up in the log (incremental builds hide them).
    build = ["cmake", "--build", str(build_dir), "--clean-first", "-j", str(jobs)]
    text = ""
    for cmd in (configure, build):
        try:
            r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=timeout_s,
                               stdin=subprocess.DEVNULL, env=plugin_env())
        except subprocess.TimeoutExpired:
            raise EvaluateError(f"building the plugin took longer than {timeout_s} s: {' '.join(cmd)}",
                                sub.plugin_source) from None
        out = r.stdout.decode("utf-8", "replace")
        text += f"$ {' '.join(cmd)}\n{out}\n"
        if r.returncode != 0:
            Path(log).write_text(text, encoding="utf-8")
            tail = "\n".join(out.strip().splitlines()[-25:])
            raise EvaluateError(f"the plugin does not build ({' '.join(cmd[:2])} exit {r.returncode}):\n{tail}",
                                sub.plugin_source)
    Path(log).write_text(text, encoding="utf-8")
    sub.build_log = text
    sub.build_warnings = [line for line in text.splitlines() if WARNING.search(line)]
    libs = sorted(p for p in build_dir.rglob("*.so") if p.is_file() and "CMakeFiles" not in p.parts)
    if sub.plugin_library:
        libs = [p for p in libs if p.name == sub.plugin_library]
        if not libs:
            raise EvaluateError(f"the build made no library named {sub.plugin_library} (plugin.library)",
                                sub.file or sub.plugin_source)
    if len(libs) != 1:
        names = ", ".join(p.name for p in libs) or "none"
        raise EvaluateError(f"the build made {len(libs)} shared libraries ({names}); name the plugin with "
                            f"[plugin] library = \"...\" in {SUBMISSION_FILE}", sub.plugin_source)
    sub.library = libs[0]
    return sub.library
