"""The read's allocation settings: numpy's huge-page advice is off inside and restored after."""

from __future__ import annotations

import pytest

from addon.xfile import allocation, read

SWITCH = allocation._HUGE_PAGE_SWITCH


def current() -> bool:
    assert SWITCH is not None
    previous = SWITCH(True)  # the setter returns the old value: read it, then put it back
    SWITCH(previous)
    return bool(previous)


@pytest.mark.skipif(SWITCH is None, reason="this numpy has no huge-page setter")
@pytest.mark.parametrize("before", [True, False])
def test_small_pages_switches_off_and_restores(before: bool) -> None:
    assert SWITCH is not None
    original = SWITCH(before)
    try:
        with allocation.small_pages():
            assert current() is False
        assert current() is before
        with pytest.raises(RuntimeError), allocation.small_pages():
            raise RuntimeError("restored on errors too")
        assert current() is before
    finally:
        SWITCH(original)


@pytest.mark.skipif(SWITCH is None, reason="this numpy has no huge-page setter")
def test_read_leaves_the_setting_as_it_was() -> None:
    assert SWITCH is not None
    original = SWITCH(True)
    try:
        read(b"xof 0303txt 0032\nVector v { 1.0; 2.0; 3.0; }\n")
        assert current() is True
    finally:
        SWITCH(original)


def test_settle_malloc_runs_once(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(allocation, "_malloc_settled", False)
    calls = []
    real_empty = allocation.np.empty

    def counting_empty(*args: object, **kwargs: object) -> object:
        calls.append(args)
        return real_empty(*args, **kwargs)  # type: ignore[call-overload]

    monkeypatch.setattr(allocation.np, "empty", counting_empty)
    allocation.settle_malloc()
    allocation.settle_malloc()
    assert len(calls) == 1


def test_settle_malloc_takes_a_file_size_once_per_size(monkeypatch: pytest.MonkeyPatch) -> None:
    # a file's bytes come from the heap when the block freed first is at least that big:
    # sizes rounded up to a MiB, 8 MiB at least, 31 MiB at most (glibc's limit is 32 MiB)
    monkeypatch.setattr(allocation, "_malloc_settled", 0)
    sizes = []
    real_empty = allocation.np.empty

    def counting_empty(size: int, *args: object, **kwargs: object) -> object:
        sizes.append(size)
        return real_empty(size, *args, **kwargs)  # type: ignore[call-overload]

    monkeypatch.setattr(allocation.np, "empty", counting_empty)
    mib = 1 << 20
    for at_least in (100, 8 * mib, 25_264_205, 20 * mib, 25 * mib, 32_029_728, 200 * mib):
        allocation.settle_malloc(at_least)
    assert sizes == [8 * mib, 25 * mib, 31 * mib]


def test_a_file_read_settles_malloc_for_its_size(tmp_path, monkeypatch) -> None:
    from addon.xfile.container import source

    seen: list[int] = []
    monkeypatch.setattr(source, "settle_malloc", seen.append)
    path = tmp_path / "a.x"
    path.write_bytes(b"xof 0303txt 0032\n" + b" " * 5000)
    assert source.read_file(str(path)) == path.read_bytes()
    assert seen == [len(path.read_bytes())]
