"""Worker processes: each imports bpy once and converts one file at a time.

``WorkerProcess`` (the parent's side) starts ``python -m addon.batch.worker IN OUT`` with two
pipes; the child enables the extension, says it is ready (with the import operator's
properties) and then answers one task at a time. A child that dies or stops answering is
reported for the file it held (``crashed``) and started anew for the next file. The child
runs in its own session, so a Ctrl-C at the terminal reaches only the parent, which stops it;
a parent that is killed cannot stop it, so the child watches its parent's pid and ends itself
when the parent is gone, also while a conversion hangs.
"""

from __future__ import annotations

import contextlib
import faulthandler
import json
import os
import resource
import signal
import subprocess
import sys
import tempfile
import threading
import time
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
STARTUP_SECONDS = 300.0
_LOG_TAIL = 1500  # characters of a crashed worker's log kept in its error
_FAULT_LOG: Any = None  # the child's faulthandler file (kept open for its life)


def _rss_mb() -> dict[str, float]:
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0  # KiB on Linux
    try:
        pages = int(Path("/proc/self/statm").read_text().split()[1])
        now = pages * os.sysconf("SC_PAGE_SIZE") / 2**20
    except (OSError, ValueError, IndexError):
        now = float("nan")
    return {"peak_rss_mb": round(peak, 1), "rss_mb": round(now, 1)}


def _watch(parent: int, every: float = 0.5) -> None:
    """End this process when ``parent`` is gone (POSIX: the child then has another parent).
    The cloth's step helpers watch their parent the same way."""
    while os.getppid() == parent:
        time.sleep(every)
    os._exit(0)


def watch_parent(parent: int) -> None:
    """Start the watch in a daemon thread (not on Windows, which keeps the old parent pid)."""
    if parent and os.name != "nt":
        threading.Thread(target=_watch, args=(parent,), daemon=True).start()


def serve(in_fd: int, out_fd: int) -> None:
    """The child's loop: tasks in, results out, until the parent closes the pipe."""
    # a crash leaves the Python stack in the worker's log, also while a conversion's output
    # is captured (fd 2 then points elsewhere): a copy of the log's descriptor
    global _FAULT_LOG
    _FAULT_LOG = os.fdopen(os.dup(2), "w")
    faulthandler.enable(file=_FAULT_LOG)
    tasks = Connection(in_fd, writable=False)
    results = Connection(out_fd, readable=False)
    try:
        import bpy

        from . import job

        job.enable_extension()
        props = job.operator_properties()
        results.send_bytes(
            json.dumps(
                {"ready": True, "pid": os.getpid(), "bpy": bpy.app.version_string, "props": props}
            ).encode()
        )
    except Exception as exc:  # reported to the parent, which names it for the file
        results.send_bytes(
            json.dumps({"ready": False, "error": f"{type(exc).__name__}: {exc}"}).encode()
        )
        return
    done = 0  # files this worker has converted: the report's memory figures per file
    while True:
        try:
            message = json.loads(tasks.recv_bytes())
        except (EOFError, OSError):
            return
        if message.get("stop"):
            return
        result = job.convert(message, props)
        done += 1
        result.update(_rss_mb(), worker_pid=os.getpid(), worker_files=done)
        results.send_bytes(json.dumps(result).encode())


def _describe_exit(code: int | None) -> str:
    if code is None:
        return "stopped answering"
    if code < 0:
        try:
            return f"was killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"was killed by signal {-code}"
    return f"exited with code {code}"


class WorkerProcess:
    """One bpy worker child, started on first use and again after it dies."""

    def __init__(self, log_dir: Path | None = None, env: dict[str, str] | None = None) -> None:
        self.log_dir = Path(log_dir or tempfile.mkdtemp(prefix="xof-batch-logs-"))
        self.env = env
        self.proc: subprocess.Popen[bytes] | None = None
        self.info: dict[str, Any] = {}
        self.starts = 0
        self._tasks: Connection | None = None
        self._results: Connection | None = None
        self._log_path: Path | None = None
        self._log_offset = 0  # where the current task's part of the log begins
        self.timed_out = False

    # -- life cycle ------------------------------------------------------------------------
    def start(self) -> dict[str, Any]:
        """Start the child and wait until it is ready; its ready message (or an error)."""
        self.stop()
        self.starts += 1
        r1, w1 = os.pipe()
        r2, w2 = os.pipe()
        env = dict(os.environ if self.env is None else self.env)
        env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH")) if p)
        self._log_path = self.log_dir / f"worker-{os.getpid()}-{id(self)}-{self.starts}.log"
        self._log_offset = 0
        with open(self._log_path, "wb") as log:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "addon.batch.worker", str(r1), str(w2), str(os.getpid())],
                pass_fds=(r1, w2),
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                cwd=str(ROOT),
                env=env,
                start_new_session=True,
            )
        os.close(r1)
        os.close(w2)
        self._tasks = Connection(w1, readable=False)
        self._results = Connection(r2, writable=False)
        message = self._receive(STARTUP_SECONDS)
        if message is None or not message.get("ready"):
            error = (message or {}).get("error") or self._death("while starting")
            self.stop()
            return {"ready": False, "error": f"the worker did not start: {error}"}
        self.info = message
        return message

    def stop(self) -> None:
        """End the child (politely, then by force) and close the pipes."""
        proc, self.proc = self.proc, None
        for conn in (self._tasks, self._results):
            if conn is not None:
                conn.close()
        self._tasks = self._results = None
        if proc is None:
            return
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()

    def kill(self) -> None:
        """End the child at once (an interrupted batch)."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
        self.stop()

    @property
    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    # -- talking -----------------------------------------------------------------------------
    def _receive(self, timeout: float) -> dict[str, Any] | None:
        """The next message; None when the child closed its end (died) or ``timeout`` passed
        (``self.timed_out`` says which)."""
        assert self._results is not None and self.proc is not None
        self.timed_out = False
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                self.timed_out = True
                return None
            try:
                if self._results.poll(min(left, 1.0)):
                    return dict(json.loads(self._results.recv_bytes()))
            except (EOFError, OSError):
                return None
            if self.proc.poll() is not None and not self._results.poll(0):
                return None

    def _death(self, when: str) -> str:
        if self.proc is not None:
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.proc.wait(timeout=2)
        code = self.proc.poll() if self.proc is not None else None
        tail = ""
        if self._log_path is not None and self._log_path.is_file():
            with open(self._log_path, "rb") as log:
                log.seek(self._log_offset)
                text = log.read().decode("utf-8", "replace")
            lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
            fatal = [ln for ln in lines if ln.startswith("Fatal Python error")]
            picked = (fatal[:1] + [ln for ln in lines if ln.startswith("File ")][:2]) or lines[-3:]
            tail = (" (log: " + " | ".join(picked) + ")")[:_LOG_TAIL] if picked else ""
        return f"the worker {_describe_exit(code)} {when}{tail}"

    def run(self, task: dict[str, Any], timeout: float) -> dict[str, Any]:
        """Convert one file; a crash or a time-out gives a ``crashed`` result."""
        start = time.perf_counter()
        if not self.alive:
            ready = self.start()
            if not ready.get("ready"):
                return {
                    "status": "crashed",
                    "error": ready["error"],
                    "seconds": time.perf_counter() - start,
                }
        assert self._tasks is not None
        self._log_offset = self._log_path.stat().st_size if self._log_path else 0
        try:
            self._tasks.send_bytes(json.dumps(task).encode())
            result = self._receive(timeout)
        except (BrokenPipeError, OSError):
            result = None
        if result is not None:
            return result
        if self.timed_out:  # no answer in time: stop it, the next file gets a fresh worker
            self.kill()
            error = f"no result after {timeout:g} s; the worker was stopped"
        else:
            error = self._death("during the conversion")
        self.stop()
        return {"status": "crashed", "error": error, "seconds": time.perf_counter() - start}


if __name__ == "__main__":
    watch_parent(int(sys.argv[3]) if len(sys.argv) > 3 else 0)
    serve(int(sys.argv[1]), int(sys.argv[2]))
