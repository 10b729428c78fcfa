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
