"""The quality part of the score (docs/evaluate.md, "Quality").

    tests     the submission's own tests pass: ctest in the plugin's build, pytest for
              Python and model submissions (or [tests] command of submission.toml)
    readme    README.md is the technical report: every section of the template
              (README_SECTIONS) present and filled in -- at least readme_min_words
              words, no FERRY-TEMPLATE placeholder left; points pro rata per section
    lint      plugin: no compiler warning under -Wall -Wextra; Python: ruff (or
              pyflakes) finds nothing; a model file has no code: not applicable
    reviewer  a reviewer's score file (--review FILE: score = N, notes = "..."),
              else pending (0 points until a reviewer scores it)
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys

from .task import EvaluateError, Table, read_toml

README_SECTIONS = ("Summary", "Approach", "Correctness", "Performance", "Limitations")
TEMPLATE_MARKER = "FERRY-TEMPLATE"


def _check(name, points, max_points, status, detail):
    return {"name": name, "points": round(float(points), 4), "max": max_points, "status": status, "detail": detail}


def _run(cmd, cwd, timeout, env=None):
    try:
        r = subprocess.run(cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=timeout,
                           stdin=subprocess.DEVNULL, env=env)
        return r.returncode, r.stdout.decode("utf-8", "replace")
    except subprocess.TimeoutExpired:
        return None, f"timed out after {timeout:g} s"
    except OSError as e:
        return None, f"cannot run {cmd[0]}: {e.strerror}"


def _last_lines(text, n=6):
    return " | ".join(line.strip() for line in text.strip().splitlines()[-n:] if line.strip())


def check_tests(sub, rule, build_dir, timeout, env):
    pts = rule.q_tests
    if sub.test_command:
        cmd, cwd, label = sub.test_command, sub.dir, " ".join(sub.test_command)
    elif sub.kind == "plugin" and sub.prebuilt is not None:
        return _check("tests", 0, pts, "fail", "a prebuilt library has no tests to run (add [tests] command)")
    elif sub.kind == "plugin":
        if not shutil.which("ctest"):
            return _check("tests", 0, pts, "fail", "ctest is not on PATH")
        cmd = ["ctest", "--test-dir", str(build_dir), "--output-on-failure", "--timeout", str(int(timeout))]
        cwd, label = build_dir, "ctest"
    else:
        has_tests = (sub.dir / "tests").is_dir() or any(sub.dir.rglob("test_*.py")) or any(sub.dir.rglob("*_test.py"))
        if not has_tests:
            return _check("tests", 0, pts, "fail", "the submission has no tests (test_*.py, tests/, or [tests] command)")
        cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(sub.dir)]
        cwd, label = sub.dir, "pytest"
    rc, out = _run(cmd, cwd, timeout, env)
    if rc == 0:
        if sub.kind == "plugin" and not sub.test_command and "No tests were found" in out:
            return _check("tests", 0, pts, "fail", "ctest found no tests (add_test in the plugin's CMakeLists.txt)")
        summary = next((line.strip() for line in reversed(out.splitlines()) if re.search(r"passed|failed", line)),
                       _last_lines(out, 1))
        return _check("tests", pts, pts, "pass", f"{label}: {summary}")
    if rc == 5 and label == "pytest":
        return _check("tests", 0, pts, "fail", "pytest collected no tests")
    return _check("tests", 0, pts, "fail", f"{label} failed ({'exit ' + str(rc) if rc is not None else out}): "
                  + _last_lines(out))


def _sections(text):
    """{heading: body} for the '## ' sections of a Markdown file."""
    out, cur = {}, None
    for line in text.splitlines():
        m = re.match(r"^##\s+(.+?)\s*#*\s*$", line)
        if m:
            cur = m.group(1).strip()
            out[cur] = ""
        elif cur is not None:
            out[cur] += line + "\n"
    return out


def check_readme(sub, rule):
    pts = rule.q_readme
    readme = next((p for p in (sub.dir / "README.md", sub.dir / "README") if p.is_file()), None)
    if readme is None:
        return _check("readme", 0, pts, "fail", "no README.md (the technical report)")
    text = readme.read_text(encoding="utf-8", errors="replace")
    sections = _sections(text)
    filled, problems = 0, []
    for name in README_SECTIONS:
        key = next((k for k in sections if k.lower().startswith(name.lower())), None)
        if key is None:
            problems.append(f"no '## {name}' section")
            continue
        body = re.sub(r"<!--.*?-->", " ", sections[key], flags=re.S)
        if TEMPLATE_MARKER in body:
            problems.append(f"'{name}' still holds the template's placeholder")
            continue
        words = len(re.findall(r"[A-Za-z0-9][\w.+-]*", body))
        if words < rule.readme_min_words:
            problems.append(f"'{name}' has {words} words (< {rule.readme_min_words})")
            continue
        filled += 1
    points = pts * filled / len(README_SECTIONS)
    status = "pass" if filled == len(README_SECTIONS) else ("partial" if filled else "fail")
    detail = f"{filled}/{len(README_SECTIONS)} sections filled in" + (": " + "; ".join(problems) if problems else "")
    return _check("readme", points, pts, status, detail)


def _python_files(sub):
    skip = {"build", ".venv", "__pycache__", ".git"}
    return sorted(p for p in sub.dir.rglob("*.py") if not (set(p.relative_to(sub.dir).parts) & skip))


def _python_linter():
    """argv prefix of the first linter available: ruff, then pyflakes."""
    import importlib.util

    # ruff's classic default rules, fixed here so a score does not move with ruff's version or a
    # configuration file in the submission: pyflakes (F) and pycodestyle's errors (E4, E7, E9).
    rules = ["check", "--no-cache", "--quiet", "--isolated", "--output-format", "concise", "--select", "E4,E7,E9,F"]
    if importlib.util.find_spec("ruff") is not None:
        return [sys.executable, "-m", "ruff", *rules], "ruff"
    if shutil.which("ruff"):
        return ["ruff", *rules], "ruff"
    if importlib.util.find_spec("pyflakes") is not None:
        return [sys.executable, "-m", "pyflakes"], "pyflakes"
    return None, None


def check_lint(sub, rule, timeout):
    pts = rule.q_lint
    if sub.kind == "plugin" and sub.prebuilt is not None:
        return _check("lint", 0, pts, "fail", "a prebuilt library: not built here, so not checked")
    if sub.kind == "plugin":
        n = len(sub.build_warnings)
        if n == 0:
            return _check("lint", pts, pts, "pass", "no compiler warnings under -Wall -Wextra")
        first = "; ".join(w.strip() for w in sub.build_warnings[:3])
        return _check("lint", 0, pts, "fail", f"{n} compiler warning{'s' if n > 1 else ''} under -Wall -Wextra: {first}")
    files = _python_files(sub)
    if not files:
        return _check("lint", pts, pts, "n/a", "no source code to lint (a model file)")
    argv, name = _python_linter()
    if argv is None:
        return _check("lint", pts, pts, "n/a", "no Python linter installed (pip install ruff); not checked")
    rc, out = _run(argv + [str(f) for f in files], sub.dir, timeout)
    if rc == 0:
        return _check("lint", pts, pts, "pass", f"{name}: {len(files)} file{'s' if len(files) > 1 else ''} clean")
    return _check("lint", 0, pts, "fail", f"{name}: " + _last_lines(out, 4))


def check_reviewer(rule, review_file):
    pts = rule.q_reviewer
    if pts == 0:
        return None
    if not review_file:
        return _check("reviewer", 0, pts, "pending", "no reviewer score yet (--review FILE)")
    t = Table(read_toml(review_file), "review", review_file)
    score = t.float("score", required=True, low=0.0)
    reviewer = t.str("reviewer", "")
    notes = t.str("notes", "")
    t.done()
    if score > pts:
        raise EvaluateError(f"score = {score:g} is more than the task's reviewer points ({pts:g})", review_file)
    detail = f"{score:g}/{pts:g}" + (f" by {reviewer}" if reviewer else "") + (f": {notes}" if notes else "")
    return _check("reviewer", score, pts, "pass" if score == pts else "partial", detail)


def quality_checks(sub, rule, build_dir, timeout, review_file, env=None):
    checks = [check_tests(sub, rule, build_dir, timeout, env), check_readme(sub, rule), check_lint(sub, rule, timeout)]
    rev = check_reviewer(rule, review_file)
    if rev:
        checks.append(rev)
    return [c for c in checks if c["max"] > 0 or c["points"] > 0]
