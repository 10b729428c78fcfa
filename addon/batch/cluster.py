"""The same tasks on a Dask distributed cluster (``--scheduler tcp://HOST:PORT``).

Each task runs in a Dask worker, which hands it to a bpy worker child of its own
(``WorkerProcess``, one per Dask worker thread, started on first use and kept): a crash of
bpy takes down the child, not the Dask worker, and is reported for that file like in the
local pool. Inputs and outputs are paths: every Dask worker must see them at the same place
(a shared file system), and must run from a checkout with the same environment.
"""

from __future__ import annotations

import atexit
import socket
import threading
import uuid
from typing import Any

from .pool import OnResult
from .worker import WorkerProcess

_local = threading.local()


def _worker() -> WorkerProcess:
    worker = getattr(_local, "worker", None)
    if worker is None:
        worker = _local.worker = WorkerProcess()
        atexit.register(worker.kill)
    return worker


def dask_convert(task: dict[str, Any], timeout: float) -> dict[str, Any]:
    """A Dask task: one conversion in this Dask worker's bpy child."""
    result = _worker().run(task, timeout)
    result["host"] = socket.gethostname()
    return result


def dask_probe() -> dict[str, Any]:
    """A Dask task: a bpy child's ready message (the import operator's properties)."""
    worker = _worker()
    return worker.info if worker.alive else worker.start()


class DaskRunner:
    """Runs tasks on the cluster whose scheduler is at ``address``."""

    def __init__(self, address: str, timeout: float) -> None:
        from distributed import Client

        self.client = Client(address, timeout="30s")
        self.timeout = timeout
        self.stopping = threading.Event()
        self._futures: list[Any] = []

    def probe(self) -> dict[str, Any]:
        future = self.client.submit(dask_probe, pure=False, key=f"xof-probe-{uuid.uuid4().hex}")
        return dict(future.result())

    def run(self, tasks: list[dict[str, Any]], on_result: OnResult) -> None:
        from distributed import as_completed

        batch = uuid.uuid4().hex[:8]
        keys = [f"xof-convert-{batch}-{i}" for i in range(len(tasks))]
        self._futures = self.client.map(
            dask_convert, tasks, timeout=self.timeout, key=keys, pure=False, retries=0
        )
        by_key = dict(zip(keys, tasks, strict=True))
        for future in as_completed(self._futures):
            if self.stopping.is_set():
                break
            try:
                result = dict(future.result())
            except Exception as exc:  # e.g. KilledWorker: the Dask worker itself died
                result = {
                    "status": "crashed",
                    "error": f"the Dask task failed: {type(exc).__name__}: {exc}",
                }
            on_result(by_key[future.key], result)
        self.close()

    def stop(self) -> None:
        self.stopping.set()
        if self._futures:
            self.client.cancel(self._futures)

    def close(self) -> None:
        self._futures = []
        self.client.close()
