"""The harness's side of the worker protocol (src/evaluate/worker.h).

Each candidate -- baseline, submission, peer -- is a child process in a
session of its own, answering one JSON line per request. Every request has
a deadline: a worker that does not answer in time is killed (with its whole
process group) and the request fails with "timed out"; one that dies fails
with the signal or exit status and the end of its log. Nothing a candidate
does can hang or crash the harness.
"""

from __future__ import annotations

import json
import os
import selectors
import signal
import subprocess
import sys
import time
from pathlib import Path


class CandidateFailure(Exception):
    """The candidate failed a request; `fatal` when its process is gone (crash, timeout)."""

    def __init__(self, message, fatal=False):
        super().__init__(message)
        self.fatal = fatal


def _signal_name(num):
    try:
        return signal.Signals(num).name
    except ValueError:
        return f"signal {num}"


def log_tail(path, lines=12, limit=3000):
    try:
        text = Path(path).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""
    text = text.strip()
    if len(text) > limit:
        text = "..." + text[-limit:]
    return "\n".join(text.splitlines()[-lines:])


class Worker:
    def __init__(self, label, argv, log_path, start_timeout, env=None, cwd=None):
        self.label = label
        self.argv = [str(a) for a in argv]
        self.log_path = Path(log_path)
        self.ready = None
        self._buf = b""
        self._log = open(self.log_path, "wb")
        try:
            self.proc = subprocess.Popen(self.argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self._log,
                                         env=env, cwd=cwd, start_new_session=True)
        except OSError as e:
            self._log.close()
            raise CandidateFailure(f"{label}: cannot start {self.argv[0]}: {e.strerror}", fatal=True) from None
        self.ready = self._reply(start_timeout, "starting")

    # --- requests -------------------------------------------------------------------
    def request(self, obj, timeout, what):
        if self.proc.poll() is not None:
            raise CandidateFailure(self._death(what), fatal=True)
        try:
            self.proc.stdin.write((json.dumps(obj) + "\n").encode())
            self.proc.stdin.flush()
        except (BrokenPipeError, OSError):
            self._wait_dead()
            raise CandidateFailure(self._death(what), fatal=True) from None
        return self._reply(timeout, what)

    def _reply(self, timeout, what):
        deadline = time.monotonic() + timeout
        sel = selectors.DefaultSelector()
        sel.register(self.proc.stdout, selectors.EVENT_READ)
        try:
            while b"\n" not in self._buf:
                left = deadline - time.monotonic()
                if left <= 0:
                    self.kill()
                    raise CandidateFailure(
                        f"timed out: no answer within {timeout:g} s while {what} (killed; a hang or far too slow)",
                        fatal=True)
                if not sel.select(left):
                    continue
                chunk = os.read(self.proc.stdout.fileno(), 1 << 16)
                if not chunk:
                    self._wait_dead()
                    raise CandidateFailure(self._death(what), fatal=True)
                self._buf += chunk
        finally:
            sel.close()
        line, self._buf = self._buf.split(b"\n", 1)
        try:
            reply = json.loads(line)
        except ValueError:
            self.kill()
            raise CandidateFailure(f"broke the worker protocol while {what}: {line[:200]!r}", fatal=True) from None
        if not isinstance(reply, dict) or not reply.get("ok"):
            err = reply.get("error", "failed") if isinstance(reply, dict) else "failed"
            if self.proc.poll() is None and what == "starting":
                self._wait_dead(5)
            raise CandidateFailure(err, fatal=self.proc.poll() is not None)
        return reply

    # --- the end --------------------------------------------------------------------
    def _wait_dead(self, timeout=10):
        try:
            self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.kill()

    def _death(self, what):
        rc = self.proc.returncode
        if rc is None:
            how = "stopped answering"
        elif rc < 0:
            how = f"crashed: killed by {_signal_name(-rc)}"
        else:
            how = f"exited with status {rc}"
        tail = log_tail(self.log_path)
        return f"{how} while {what}" + (f"; the end of its log ({self.log_path}):\n{tail}" if tail else "")

    def kill(self):
        if self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                self.proc.kill()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            pass

    def close(self):
        if self.proc.poll() is None:
            try:
                self.proc.stdin.write(b'{"cmd":"quit"}\n')
                self.proc.stdin.flush()
                self.proc.wait(10)
            except (BrokenPipeError, OSError, subprocess.TimeoutExpired):
                pass
        self.kill()
        for f in (self.proc.stdin, self.proc.stdout):
            try:
                f.close()
            except OSError:
                pass
        self._log.close()


def python_worker_argv(spec_file):
    """`python -m ferry.evaluate.worker SPEC.json` with this interpreter."""
    return [sys.executable, "-m", "ferry.evaluate.worker", str(spec_file)]


def worker_env():
    """The environment for Python workers: this package importable, no .pyc files in the tree."""
    env = dict(os.environ)
    pkg_root = str(Path(__file__).resolve().parent.parent.parent)
    env["PYTHONPATH"] = pkg_root + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    return env
