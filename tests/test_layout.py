"""The package's shape: no import cycles, bpy only where it belongs, lint independent of the
clone's folder name, one import path for addon/scene (no bpy needed).

Imports are read with ``ast`` from ``__init__.py``, ``addon/`` and ``operators/`` (relative
imports resolved). A module-level import runs when the module loads; imports under
``if TYPE_CHECKING:`` never run, so they are kept apart: the run-time graph (module level,
without them) must have no cycle, and a typing-only import may name a module that imports this
one (for annotations only). Imports inside functions are lazy and not part of the cycle check.
"""

from __future__ import annotations

import ast
import shutil
import subprocess
import sys
import types
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from .conftest import ROOT, scene_imported_twice

PACKAGE = "xof"
BPY_MODULES = {"bpy", "bpy_extras", "mathutils", "bmesh", "addon_utils", "gpu"}

#: addon/scene's numpy planners and other bpy-free modules (with addon/xfile and addon/sim)
SCENE_WITHOUT_BPY = (
    "imp.convert",
    "imp.finite",
    "imp.faces",
    "imp.options",
    "rig.skeleton",
    "rig.skin_weights",
    "rig.rig_math",
    "rig.stretch",
    "anim.timing",
    "anim.set_groups",
    "anim.name_match",
    "morph.phonemes",
    "anim.key_sampling",
    "anim.position_spline",
    "anim.bezier_keys",
    "morph.plan",
    "cloth.cache",
    "cloth.playback",
    "export.plan",
)


@dataclass
class Module:
    name: str
    is_package: bool
    runtime: set[str] = field(default_factory=set)  # module level, run when it loads
    typing: set[str] = field(default_factory=set)  # under `if TYPE_CHECKING:`
    lazy: set[str] = field(default_factory=set)  # inside functions
    external: set[str] = field(default_factory=set)  # top-level names outside the package


def _module_files() -> Iterator[tuple[str, Path]]:
    yield PACKAGE, ROOT / "__init__.py"
    for top in ("addon", "operators"):
        for path in sorted((ROOT / top).rglob("*.py")):
            parts = path.relative_to(ROOT).with_suffix("").parts
            if parts[-1] == "__init__":
                parts = parts[:-1]
            yield ".".join((PACKAGE, *parts)), path


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _imports(tree: ast.Module) -> Iterator[tuple[str, ast.Import | ast.ImportFrom]]:
    """Every import with where it sits: "runtime", "typing" or "lazy"."""

    def walk(nodes: list[ast.stmt], kind: str) -> Iterator[tuple[str, ast.Import | ast.ImportFrom]]:
        for node in nodes:
            if isinstance(node, ast.Import | ast.ImportFrom):
                yield kind, node
            elif isinstance(node, ast.If) and _is_type_checking(node.test):
                yield from walk(node.body, "typing")
                yield from walk(node.orelse, kind)
            elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                yield from walk(node.body, "lazy")
            else:
                for name in ("body", "orelse", "finalbody", "handlers"):
                    inner = getattr(node, name, None)
                    if isinstance(inner, list):
                        stmts = [s for s in inner if isinstance(s, ast.stmt)]
                        stmts += [s for h in inner if isinstance(h, ast.ExceptHandler)
                                  for s in h.body]  # fmt: skip
                        yield from walk(stmts, kind)

    yield from walk(tree.body, "runtime")


def import_graph() -> dict[str, Module]:
    modules = {name: Module(name, path.name == "__init__.py") for name, path in _module_files()}
    for name, path in _module_files():
        mod = modules[name]
        package = name if mod.is_package else name.rpartition(".")[0]
        for kind, node in _imports(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            targets: set[str] = set()
            if isinstance(node, ast.Import):
                for alias in node.names:
                    mod.external.add(alias.name.split(".")[0])
                continue
            if node.level == 0:
                assert node.module is not None
                mod.external.add(node.module.split(".")[0])
                continue
            base = package.split(".")
            if node.level > 1:
                base = base[: len(base) - (node.level - 1)]
            target = ".".join([*base, node.module] if node.module else base)
            names = [a.name for a in node.names]
            submodules = {f"{target}.{n}" for n in names if f"{target}.{n}" in modules}
            targets |= submodules
            if len(submodules) < len(names) or not submodules:
                targets.add(target)
            assert all(t in modules for t in targets), (name, targets)
            getattr(mod, kind).update(t for t in targets if t != name)
    return modules


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(edges.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                out.append(sorted(component))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return out


def reachable(graph: dict[str, Module], start: str) -> set[str]:
    """Modules that loading ``start`` (and calling its functions) may import."""
    seen = {start}
    todo = [start]
    while todo:
        mod = graph[todo.pop()]
        for target in mod.runtime | mod.lazy:
            if target not in seen:
                seen.add(target)
                todo.append(target)
    return seen


GRAPH = import_graph()


def test_the_graph_sees_the_package():
    assert f"{PACKAGE}.addon.scene.importer" in GRAPH
    importer = GRAPH[f"{PACKAGE}.addon.scene.importer"]
    assert f"{PACKAGE}.addon.scene.imp.context" in importer.runtime
    assert "bpy" in importer.external


def test_no_import_cycle_at_run_time():
    runtime = {name: mod.runtime for name, mod in GRAPH.items()}
    assert cycles(runtime) == []


def test_the_cycle_check_finds_a_cycle():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


@pytest.mark.parametrize(
    "start",
    [n for n in GRAPH if n.startswith((f"{PACKAGE}.addon.xfile", f"{PACKAGE}.addon.sim"))]
    + [f"{PACKAGE}.addon.scene.{m}" for m in SCENE_WITHOUT_BPY]
    + [n for n in GRAPH if n.startswith(f"{PACKAGE}.addon.scene.export.plan.")],
)
def test_no_bpy_even_indirectly(start: str):
    assert start in GRAPH
    using = sorted(m for m in reachable(GRAPH, start) if GRAPH[m].external & BPY_MODULES)
    assert using == [], f"{start} reaches bpy through {using}"


def test_the_scene_check_sees_a_second_copy(monkeypatch):
    assert scene_imported_twice() == []
    monkeypatch.setitem(sys.modules, "addon.scene.imp.convert", types.ModuleType("copy"))
    assert scene_imported_twice() == ["addon.scene.imp.convert"]


def _ruff(folder: Path) -> tuple[int, str]:
    run = subprocess.run(
        [sys.executable, "-m", "ruff", "check", "--no-cache", "--output-format", "concise", "."],
        cwd=folder, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    return run.returncode, run.stdout


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_lint_does_not_depend_on_the_folder_name(tmp_path: Path):
    pytest.importorskip("ruff")
    listed = subprocess.run(
        ["git", "ls-files", "-co", "--exclude-standard", "-z"],
        cwd=ROOT, capture_output=True, text=True, check=True,
    ).stdout.split("\0")  # fmt: skip
    files = [f for f in listed if f and (ROOT / f).is_file()]
    results = []
    for name in ("xof", "xof-clone"):
        folder = tmp_path / name
        for f in files:
            (folder / f).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / f, folder / f)
        results.append(_ruff(folder))
    assert results[0] == results[1]
    assert results[0] == (0, "All checks passed!\n")


# --- the rooms ------------------------------------------------------------------------------

SIM = f"{PACKAGE}.addon.sim"
#: the solver's concern folders; ``many/`` (helper processes, the World) sits above them
SIM_CONCERNS = ("mesh", "xpbd", "classic", "collide", "self_collide")
MAX_MODULES_A_FOLDER = 15


def _edges(kinds: tuple[str, ...] = ("runtime", "lazy", "typing")) -> dict[str, set[str]]:
    return {n: set().union(*(getattr(m, k) for k in kinds)) for n, m in GRAPH.items()}


def _room(name: str) -> str | None:
    """The sim subpackage a module sits in (None for the package's top modules)."""
    rest = name.removeprefix(f"{SIM}.").split(".")
    if not name.startswith(f"{SIM}.") or len(rest) < 2:
        return None
    return rest[0]


def test_no_folder_holds_more_than_fifteen_modules():
    crowded = {}
    for folder in [ROOT / "operators", *(p for p in (ROOT / "addon").rglob("*") if p.is_dir())]:
        count = len([p for p in folder.glob("*.py")])
        if count > MAX_MODULES_A_FOLDER:
            crowded[str(folder.relative_to(ROOT))] = count
    assert crowded == {}


def test_no_import_cycle_even_through_lazy_imports():
    assert cycles(_edges(("runtime", "lazy"))) == []


def test_the_sim_rooms_import_each_other_without_a_cycle():
    rooms: dict[str, set[str]] = {}
    for name, targets in _edges().items():
        here = _room(name)
        if here is not None:
            rooms.setdefault(here, set()).update(
                r for r in map(_room, targets) if r is not None and r != here
            )
    assert set(SIM_CONCERNS) | {"many"} <= set(rooms)
    assert cycles(rooms) == []


@pytest.mark.parametrize("concern", SIM_CONCERNS)
def test_no_solver_concern_imports_the_many_room(concern: str):
    inside = [n for n in GRAPH if n.startswith(f"{SIM}.{concern}")]
    assert inside
    reaching = {n: sorted(t for t in _edges()[n] if t.startswith(f"{SIM}.many")) for n in inside}
    assert {n: t for n, t in reaching.items() if t} == {}


def test_scene_and_operators_reach_sim_only_through_its_door():
    outside = [n for n in GRAPH if n.startswith((f"{PACKAGE}.addon.scene", f"{PACKAGE}.operators"))]
    through = {
        n: sorted(t for t in _edges()[n] if t.startswith(f"{SIM}.")) for n in outside
    }  # fmt: skip
    assert {n: t for n, t in through.items() if t} == {}


def test_no_ctypes_under_scene():
    using = sorted(
        n
        for n, m in GRAPH.items()
        if n.startswith(f"{PACKAGE}.addon.scene") and "ctypes" in m.external
    )
    assert using == []


def test_importing_sim_starts_nothing_and_installs_no_hook():
    """No helper, thread or exit / fork hook until a helper process is actually started."""
    probe = (
        "import atexit, os, threading\n"
        "before = atexit._ncallbacks()\n"
        "import addon.sim, addon.sim.many.parallel as parallel\n"
        "assert atexit._ncallbacks() == before, 'an exit hook'\n"
        "assert threading.active_count() == 1, 'a thread'\n"
        "assert parallel.running() == 0 and not parallel._HOOKS, 'a helper or a fork hook'\n"
        "print('quiet')\n"
    )
    run = subprocess.run(
        [sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert run.stdout.strip() == "quiet", run.stderr
