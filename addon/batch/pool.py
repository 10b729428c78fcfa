"""The local pool: N worker processes on this machine, one thread in the parent feeding each.

A worker that crashes is replaced for the next file (``WorkerProcess.run``); results reach
``on_result`` as they come, from the feeding threads (the caller serialises its own state).
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .worker import WorkerProcess

OnResult = Callable[[dict[str, Any], dict[str, Any]], None]


class LocalPool:
    """Runs tasks on ``workers`` local worker processes."""

    def __init__(self, workers: int, timeout: float, log_dir: Path | None = None) -> None:
        self.workers = [WorkerProcess(log_dir) for _ in range(max(1, workers))]
        self.timeout = timeout
        self.stopping = threading.Event()

    def probe(self) -> dict[str, Any]:
        """Start the first worker; its ready message (the import operator's properties)."""
        return self.workers[0].start()

    def run(self, tasks: list[dict[str, Any]], on_result: OnResult) -> None:
        """Convert every task (or until ``stop``); returns when all threads are done."""
        todo: queue.SimpleQueue[dict[str, Any]] = queue.SimpleQueue()
        for task in tasks:
            todo.put(task)

        def feed(worker: WorkerProcess) -> None:
            while not self.stopping.is_set():
                try:
                    task = todo.get_nowait()
                except queue.Empty:
                    break
                result = worker.run(task, self.timeout)
                if self.stopping.is_set():
                    break  # interrupted: this file's result is not the file's fault
                on_result(task, result)
            worker.stop()

        threads = [
            threading.Thread(target=feed, args=(w,), daemon=True)
            for w in self.workers[: max(1, min(len(self.workers), len(tasks)))]
        ]
        for t in threads:
            t.start()
        try:
            for t in threads:
                while t.is_alive():
                    t.join(0.2)
        finally:
            if any(t.is_alive() for t in threads):
                self.stop()
        for w in self.workers:
            w.stop()

    def close(self) -> None:
        """End the workers politely (after a run, or when the run is refused)."""
        for w in self.workers:
            w.stop()

    def stop(self) -> None:
        """Stop at once: workers are killed, files in progress are left unconverted."""
        self.stopping.set()
        for w in self.workers:
            w.kill()
