"""Load one .X file with Panda3D and print what it made of it (run by ``panda_reader``).

Usage: ``python xload.py FILE assimp|own``. ``assimp``: Panda3D's default ``.x`` loader (its
bundled Assimp); ``own``: Panda's own reader (pandatool's xfile converter, text files only),
chosen by turning the Assimp loader off for ``.x``. Prints ``vertices N``, ``joints N`` and
one ``anim NAME FRAMES`` line per animation; exits 2 when the file is refused, 3 when
``panda3d`` cannot be imported.
"""

from __future__ import annotations

import sys


def main() -> int:
    path, which = sys.argv[1], sys.argv[2]
    try:
        from panda3d.core import (
            AnimBundleNode,
            Character,
            Filename,
            GeomNode,
            Loader,
            LoaderOptions,
            NodePath,
            load_prc_file_data,
        )
    except ImportError as exc:
        print(f"panda3d cannot be imported: {exc}", file=sys.stderr)
        return 3
    config = "model-cache-dir\nnotify-level warning\naudio-library-name null\n"
    if which == "own":
        config += "assimp-disable-extensions x\n"
    load_prc_file_data("xof", config)
    options = LoaderOptions(LoaderOptions.LF_no_cache | LoaderOptions.LF_report_errors)
    try:
        node = Loader.get_global_ptr().load_sync(Filename.from_os_specific(path), options)
    except AssertionError as exc:  # Panda raises its failed assertions ("mismatched ...")
        print(f"refused: {exc}", file=sys.stderr)
        return 2
    if node is None:
        print("refused: the loader returned nothing", file=sys.stderr)
        return 2
    root = NodePath(node)
    vertices = 0
    for found in root.find_all_matches("**/+GeomNode"):
        geom_node = found.node()
        assert isinstance(geom_node, GeomNode)
        for i in range(geom_node.get_num_geoms()):
            vertices += geom_node.get_geom(i).get_vertex_data().get_num_rows()
    joints = 0
    for found in root.find_all_matches("**/+Character"):
        character = found.node()
        assert isinstance(character, Character)
        for b in range(character.get_num_bundles()):
            joints += _count_joints(character.get_bundle(b)) - 1  # less the bundle itself
    print(f"vertices {vertices}")
    print(f"joints {joints}")
    for found in root.find_all_matches("**/+AnimBundleNode"):
        anim = found.node()
        assert isinstance(anim, AnimBundleNode)
        bundle = anim.get_bundle()
        print(f"anim {bundle.get_name()}|{anim.get_name()} {bundle.get_num_frames()}")
    return 0


def _count_joints(group: object) -> int:
    return 1 + sum(_count_joints(group.get_child(i)) for i in range(group.get_num_children()))  # type: ignore[attr-defined]


if __name__ == "__main__":
    sys.exit(main())
