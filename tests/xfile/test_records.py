"""Record-form arrays (animation keys) convert back to the dicts of their template."""

from __future__ import annotations

from addon.xfile import read
from addon.xfile.records import record_dicts

HEAD = b"xof 0303txt 0032\n"


def test_table_and_ragged_keys_back_to_dicts() -> None:
    for body, expected in [
        (b"2; 2; 0; 3; 1,2,3;;, 10; 3; 4,5,6;;;", [(0, [1, 2, 3]), (10, [4, 5, 6])]),
        (b"0; 2; 0; 4; 1,0,0,0;;, 7; 1; 5;;;", [(0, [1, 0, 0, 0]), (7, [5])]),
    ]:
        doc = read(HEAD + b"AnimationKey {" + body + b"}")
        layout = doc_layout(doc, "TimedFloatKeys")
        dicts = record_dicts(next(doc.top())["keys"], layout)
        got = [(d["time"], d["tfkeys"]["values"].tolist()) for d in dicts]
        assert got == expected
        assert [d["tfkeys"]["nValues"] for d in dicts] == [len(v) for _, v in expected]


def doc_layout(doc, name):
    from addon.xfile.templates import TemplateTable

    return TemplateTable(doc.templates).layout(name)
