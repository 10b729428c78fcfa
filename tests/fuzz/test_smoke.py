"""A few seconds of the campaign (fixed RNG seed) on every ``make test``: no crash, no hang."""

from __future__ import annotations

from .campaign import campaign


def test_fuzz_smoke_has_no_crash_or_hang() -> None:
    result = campaign(inputs=400, seconds=6.0, rng_seed=20261130, folder=None,
                      measure_memory=False, max_seed_bytes=20_000)  # fmt: skip
    assert result["inputs"] >= 100
    assert set(result["outcomes"]) <= {"ok", "error", "slow"}, result["bad"]
    assert result["outcomes"].get("ok", 0) > 0 and result["outcomes"].get("error", 0) > 0
    assert result["slowest"]["seconds"] < 3.0  # 1 s is the campaign's limit; CI machines vary
