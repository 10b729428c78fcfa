"""Coverage-guided fuzzing of the reader with atheris (``make fuzz-atheris``).

The corpus starts from every seed in all four containers; half of the mutations are ours
(structure-aware, on the lexed tokens), half libFuzzer's byte mutations. Any exception other
than XFileError, or an input slower than the harness's limit, stops the run with the input
written by libFuzzer (``crash-<sha1>``): shrink it and add it to ``tests/fuzz/crashers``.

    .venv/bin/python tests/fuzz/fuzz_read.py -max_total_time=600 [libFuzzer flags]
"""

from __future__ import annotations

import random
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import atheris

with atheris.instrument_imports():  # read() imports its modules lazily: import them here
    import addon.xfile.reader
    import addon.xfile.views.scene  # noqa: F401
    from addon.xfile import XFileError, read, scene_of

from tests.fuzz.encodings import split_file
from tests.fuzz.harness import TIME_LIMIT
from tests.fuzz.mutators import mutate
from tests.fuzz.seeds import Seed, all_encodings, load_seeds

SEEDS = load_seeds(200_000)


def test_one_input(data: bytes) -> None:
    start = time.perf_counter()
    try:
        doc = read(data)
        scene_of(doc)
    except XFileError:
        pass
    if time.perf_counter() - start > TIME_LIMIT:
        raise RuntimeError(f"slow input: {time.perf_counter() - start:.2f} s")


def custom_mutator(data: bytes, max_size: int, seed: int) -> bytes:
    rng = random.Random(seed)
    if rng.random() < 0.5:
        try:
            _, bits, version, toks = split_file(data)
            out, _ = mutate(Seed("input", data, toks, bits, version), rng, SEEDS)
            if len(out) <= max_size:
                return out
        except Exception:  # not lexable: libFuzzer's mutation instead
            pass
    return atheris.Mutate(data, max_size)


def main() -> None:
    corpus = Path(tempfile.mkdtemp(prefix="xof-fuzz-corpus-"))
    for i, seed in enumerate(SEEDS):
        (corpus / f"seed{i}").write_bytes(seed.data)
        for fmt, data in all_encodings(seed).items():
            (corpus / f"seed{i}.{fmt}").write_bytes(data)
    argv = [*sys.argv, str(corpus), "-max_len=300000", "-rss_limit_mb=4096"]
    atheris.Setup(argv, test_one_input, custom_mutator=custom_mutator)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
