"""The bpy-free playback core: which frames reset, show the cache, resume or wait, and the
cache state each change leaves (``addon.scene.cloth.playback``, no Blender needed)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
from xof.addon.scene.cloth.playback import MAX_CATCH_UP, Playback

ROOT = Path(__file__).resolve().parents[3]
N = 4
EYE = np.eye(4)


def record(pb: Playback, frame: int, value: float = 0.0, reset: bool = False) -> None:
    pb.record(frame, np.full((N, 3), value), np.zeros((N, 3)), EYE, reset=reset)


def played(frames: range) -> Playback:
    """A core that reset at the first frame and simulated the others in order."""
    pb = Playback(N)
    first = frames[0]
    pb.begin_reset(first)
    record(pb, first, reset=True)
    for f in frames[1:]:
        record(pb, f, float(f))
    return pb


def test_the_core_imports_no_bpy() -> None:
    code = (
        "import sys; import addon.scene.cloth.playback, addon.scene.cloth.cache; "
        "sys.exit('bpy' in sys.modules)"
    )
    subprocess.run([sys.executable, "-c", code], cwd=ROOT, check=True)


def test_a_fresh_core_resets_at_the_start_and_waits_elsewhere() -> None:
    pb = Playback(N)
    assert pb.state == "EMPTY"
    assert pb.plan(1, 1, 50).action == "reset"
    assert pb.plan(-3, 1, 50).action == "reset"  # before the start: the start frame's state
    assert pb.plan(-3, 1, 50).frame == 1
    assert pb.plan(7, 1, 50).action == "idle"  # nothing to continue from


def test_playing_on_steps_one_frame_from_the_solver() -> None:
    pb = played(range(1, 6))
    assert pb.state == "VALID" and pb.sim_frame == 5
    plan = pb.plan(6, 1, 50)
    assert (plan.action, plan.origin, plan.load_origin) == ("step", 5, False)
    assert list(plan.frames) == [6]


def test_scrubbing_back_shows_the_cache_and_resuming_loads_it() -> None:
    pb = played(range(1, 9))
    assert pb.plan(4, 1, 50).action == "cached"
    assert pb.plan(8, 1, 50).action == "cached"
    pb.outdate(8)  # nothing later: the solver restarts from the cache
    plan = pb.plan(9, 1, 50)
    assert (plan.origin, plan.load_origin) == (8, True)
    assert pb.resume(8).positions[0, 0] == 8.0 and pb.sim_frame == 8


def test_a_skip_catches_up_within_reach_and_waits_beyond_it() -> None:
    pb = played(range(1, 6))
    plan = pb.plan(5 + MAX_CATCH_UP, 1, 50)
    assert plan.action == "step" and list(plan.frames) == list(range(6, 6 + MAX_CATCH_UP))
    assert pb.plan(6 + MAX_CATCH_UP, 1, 50).action == "idle"


def test_frames_after_the_end_show_the_end() -> None:
    pb = played(range(1, 11))
    plan = pb.plan(30, 1, 10)
    assert (plan.action, plan.frame) == ("cached", 10)


def test_a_setting_change_drops_later_frames_and_outdates() -> None:
    pb = played(range(1, 11))
    pb.outdate(5)
    assert sorted(pb.cache.frames) == [1, 2, 3, 4, 5]
    assert pb.state == "OUTDATED" and pb.sim_frame is None
    assert pb.plan(6, 1, 50).load_origin  # resumes from the kept frame 5
    pb.begin_reset(1)  # back at the start: an outdated cache is dropped
    record(pb, 1, reset=True)
    assert sorted(pb.cache.frames) == [1] and pb.state == "VALID"


def test_a_valid_cache_survives_a_return_to_the_start() -> None:
    pb = played(range(1, 11))
    pb.begin_reset(1)
    record(pb, 1, reset=True)
    assert len(pb.cache) == 10 and pb.plan(7, 1, 50).action == "cached"


def test_an_edited_rest_shape_drops_every_frame() -> None:
    pb = played(range(1, 11))
    pb.rest_changed(N + 2)
    assert len(pb.cache) == 0 and pb.vertex_count == N + 2
    assert pb.state == "OUTDATED"
    assert pb.plan(11, 1, 50).action == "idle"
    assert Playback(N).state == "EMPTY"
    fresh = Playback(N)
    fresh.rest_changed(N)
    assert fresh.state == "EMPTY"  # nothing was cached: nothing is outdated


def test_baked_leaves_everything_alone_until_freed() -> None:
    pb = played(range(1, 4))
    pb.baked()
    assert pb.plan(2, 1, 50).action == "baked"
    pb.unbaked()
    assert pb.state == "VALID" and pb.plan(2, 1, 50).action == "cached"
    pb.free()
    assert pb.state == "EMPTY" and len(pb.cache) == 0


def test_a_saved_cache_of_another_size_is_dropped() -> None:
    pb = played(range(1, 4))
    again = Playback(N + 1, "VALID", pb.cache)
    assert len(again.cache) == 0 and again.state == "EMPTY"
    kept = Playback(N, "VALID", pb.cache)
    assert len(kept.cache) == 3 and kept.state == "VALID" and kept.sim_frame is None
