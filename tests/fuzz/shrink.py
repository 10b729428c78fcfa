"""Shrink a bad input before it is kept: drop byte ranges while the failure stays the same."""

from __future__ import annotations

from collections.abc import Callable


def shrink(data: bytes, still_bad: Callable[[bytes], bool], budget: int = 400) -> bytes:
    """Delta debugging over the bytes after the 16-byte header, at most ``budget`` tries."""
    head, body = data[:16], data[16:]
    chunk = max(1, len(body) // 2)
    tries = 0
    while chunk >= 1 and tries < budget:
        i = 0
        changed = False
        while i < len(body) and tries < budget:
            candidate = body[:i] + body[i + chunk :]
            tries += 1
            if still_bad(head + candidate):
                body = candidate
                changed = True
            else:
                i += chunk
        if not changed:
            chunk //= 2
    return head + body
