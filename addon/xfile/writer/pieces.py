"""Text pieces spelled ahead: inside :func:`spelled_ahead`, big arrays come back as futures
of their pieces, so the file writes the first while the threads spell the rest."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from contextvars import ContextVar

Piece = bytes | memoryview | Future

_POOL: ContextVar[ThreadPoolExecutor | None] = ContextVar("xof_spelling_pool", default=None)


@contextmanager
def spelled_ahead(threads: int) -> Iterator[None]:
    """Big arrays' steps go to one pool of ``threads`` in file order (FIFO); the pool is let
    go at the end without waiting (pieces not yet asked for finish on their own)."""
    pool = ThreadPoolExecutor(threads, thread_name_prefix="xof-spell")
    token = _POOL.set(pool)
    try:
        yield
    finally:
        _POOL.reset(token)
        pool.shutdown(wait=False)


def pool_ahead() -> ThreadPoolExecutor | None:
    return _POOL.get()


def piece_bytes(piece: Piece) -> bytes | memoryview:
    return piece.result() if isinstance(piece, Future) else piece


def join_pieces(parts: Iterable[Piece]) -> bytes:
    return b"".join(piece_bytes(p) for p in parts)
