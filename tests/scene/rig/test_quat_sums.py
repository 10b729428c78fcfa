"""``quat_norm`` is ``np.linalg.norm`` over the last axis bit for bit; ``quat_dot`` is
``np.sum(a * b, axis=-1)`` (a zero may differ only in its sign)."""

from __future__ import annotations

import numpy as np
from xof.addon.scene.rig.rig_math import quat_dot, quat_norm


def test_quat_norm_and_dot_equal_numpy_reductions() -> None:
    rng = np.random.default_rng(3)
    a = rng.normal(size=(5000, 4)) * rng.choice([1e-200, 1e-3, 1.0, 1e150], (5000, 1))
    b = rng.normal(size=(5000, 4))
    a[rng.random(a.shape) < 0.2] = -0.0
    b[rng.random(b.shape) < 0.2] = 0.0
    assert quat_norm(a).tobytes() == np.linalg.norm(a, axis=-1).tobytes()
    got, want = quat_dot(a, b), np.sum(a * b, axis=-1)
    assert np.array_equal(got, want)  # -0 == +0: values equal
    assert quat_dot(a[:, None, :], b[None, :3, :]).shape == (5000, 3)  # broadcasts
    assert quat_dot(np.array([-0.0, 0.0, 0.0, 0.0]), np.array([1.0, 1.0, 1.0, 1.0])) == 0.0
