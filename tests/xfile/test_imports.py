"""The format layer's imports: no module-level cycle (``document`` <-> ``views`` was one), no
bpy, and the typed views reachable from a document without one."""

from __future__ import annotations

import ast
from pathlib import Path

from addon.xfile import read
from addon.xfile.views import SceneData, scene_of

PACKAGE = Path(__file__).resolve().parents[2] / "addon" / "xfile"
ROOT_NAME = "addon.xfile"


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def is_module(name: str) -> bool:
    rel = Path(*name.split(".")[2:]) if name != ROOT_NAME else Path()
    base = PACKAGE / rel
    return base.with_suffix(".py").is_file() or (base / "__init__.py").is_file()


def _type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def module_level_imports(path: Path) -> tuple[set[str], set[str]]:
    """(modules of the package imported when ``path`` is, other top-level names imported)."""
    name = module_name(path)
    package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
    inside: set[str] = set()
    outside: set[str] = set()

    def visit(body: list[ast.stmt]) -> None:
        for node in body:
            if isinstance(node, ast.If):
                if not _type_checking(node.test):  # annotations only: never run
                    visit(node.body)
                visit(node.orelse)
            elif isinstance(node, ast.Try):
                visit(node.body)
                for handler in node.handlers:
                    visit(handler.body)
            elif isinstance(node, ast.Import):
                outside.update(alias.name.split(".")[0] for alias in node.names)
            elif isinstance(node, ast.ImportFrom):
                if not node.level:
                    outside.add((node.module or "").split(".")[0])
                    continue
                base = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
                target = f"{base}.{node.module}" if node.module else base
                for alias in node.names:
                    sub = f"{target}.{alias.name}"
                    inside.add(sub if is_module(sub) else target)

    visit(ast.parse(path.read_text(encoding="utf-8")).body)
    return inside, outside


def graph() -> dict[str, set[str]]:
    edges = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        edges[module_name(path)] = module_level_imports(path)[0]
    return edges


def find_cycle(edges: dict[str, set[str]]) -> list[str] | None:
    state: dict[str, int] = {}  # 1: on the path, 2: done
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for nxt in sorted(edges.get(node, ())):
            if state.get(nxt) == 1:
                return [*path[path.index(nxt) :], nxt]
            if nxt not in state and (found := visit(nxt)):
                return found
        path.pop()
        state[node] = 2
        return None

    for node in sorted(edges):
        if node not in state and (found := visit(node)):
            return found
    return None


def test_no_module_level_import_cycle() -> None:
    edges = graph()
    assert "addon.xfile.document" in edges["addon.xfile.views.model"]
    mszip, header = "addon.xfile.container.mszip", "addon.xfile.container.header"
    assert mszip in edges[header]  # ``from . import mszip``
    assert "addon.xfile" in edges["addon.xfile.cli"]  # ``from . import read``
    assert find_cycle(edges) is None, find_cycle(edges)


def test_the_cycle_finder_finds_one() -> None:
    edges = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert find_cycle(edges) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set()}) is None


def test_document_never_imports_the_views() -> None:
    """The views import the document; ``views.scene_of`` is the one way in to its scene data
    (``XDocument.scene()`` closed the cycle with an import inside the method)."""
    source = (PACKAGE / "document.py").read_text(encoding="utf-8")
    imports = [ln for ln in source.splitlines() if ln.lstrip().startswith(("import ", "from "))]
    assert imports and not [ln for ln in imports if "views" in ln]
    assert "def scene(" not in source


def test_no_bpy_and_only_numpy_outside_the_standard_library() -> None:
    import sys

    for path in sorted(PACKAGE.rglob("*.py")):
        _, outside = module_level_imports(path)
        foreign = {m for m in outside if m not in sys.stdlib_module_names}
        assert foreign <= {"numpy", "__future__"}, (path, foreign)
        assert "bpy" not in path.read_text(encoding="utf-8").split("import"), path


def test_scene_has_one_typed_entry_point() -> None:
    doc = read(b"xof 0303txt 0032\nFrame root { Frame child { } }\n")
    scene = scene_of(doc)
    assert isinstance(scene, SceneData)
    assert scene_of(doc) is scene  # built once, cached on the document
    assert [f.name for f in scene.frames] == ["root"]
    assert [c.name for c in scene.frames[0].children] == ["child"]
