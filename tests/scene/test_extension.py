"""The extension as users get it: validated and zipped by Blender's own tool, then installed.

Blender's extension CLI ships inside the bpy module, so this runs without a Blender binary.
Installing happens in a subprocess because ``BLENDER_USER_RESOURCES`` (the sandboxed user
folder) must be set before bpy is imported.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

pytestmark = pytest.mark.blender

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = "bl_ext.user_default.xof"

# Operators the installed extension must register (``category.name`` as in ``bpy.ops``).
# Add each operator here when it lands.
EXPECTED_OPERATORS: tuple[str, ...] = (
    "import_scene.x",
    "xof.shape_keys_from_x",
    "export_scene.x",
    "xof.sim_reset",
    "xof.sim_bake",
    "xof.sim_free_bake",
)

# Top-level entries of the zip that must never ship (tests, environments, dev tooling).
FORBIDDEN_TOP = {
    "tests",
    "examples",
    "build",
    "out",
    ".ci",
    ".git",
    ".github",
    "Makefile",
    "pyproject.toml",
}
FORBIDDEN_PREFIXES = (".venv", "requirements", ".")


def _blender_ext_cli() -> Path:
    """``blender_ext.py`` of the installed bpy (``bpy/<version>/scripts/addons_core/...``)."""
    spec = importlib.util.find_spec("bpy")
    if spec is None or spec.origin is None:
        pytest.skip("the bpy module is not installed (`make` installs it into .venv)")
    found = sorted(Path(spec.origin).parent.glob("*/scripts/addons_core/bl_pkg/cli/blender_ext.py"))
    if not found:
        pytest.fail(f"Blender's extension CLI not found under {Path(spec.origin).parent}")
    return found[-1]


def _run(
    cmd: list[str], env: dict[str, str] | None = None, cwd: str | None = None
) -> subprocess.CompletedProcess[str]:
    result = subprocess.run(cmd, capture_output=True, text=True, timeout=300, env=env, cwd=cwd)
    assert result.returncode == 0, f"{cmd} failed:\n{result.stdout}\n{result.stderr}"
    return result


@pytest.fixture(scope="module")
def extension_zip(tmp_path_factory: pytest.TempPathFactory) -> Path:
    cli = _blender_ext_cli()
    _run([sys.executable, str(cli), "validate", str(ROOT)])
    out = tmp_path_factory.mktemp("ext-build")
    _run([sys.executable, str(cli), "build", "--source-dir", str(ROOT), "--output-dir", str(out)])
    zips = list(out.glob("*.zip"))
    assert len(zips) == 1, zips
    _run([sys.executable, str(cli), "validate", str(zips[0])])
    return zips[0]


def test_zip_holds_the_package_and_no_dev_files(extension_zip: Path) -> None:
    names = zipfile.ZipFile(extension_zip).namelist()
    assert "blender_manifest.toml" in names
    assert "__init__.py" in names
    assert any(n.startswith("addon/xfile/") for n in names)
    assert any(n.startswith("operators/") for n in names)
    for name in names:
        top = name.split("/", 1)[0]
        assert top not in FORBIDDEN_TOP, name
        assert not top.startswith(FORBIDDEN_PREFIXES), name
        assert "__pycache__" not in name and not name.endswith(".pyc"), name
        assert not name.startswith("addon/batch/"), name  # the batch tool needs Dask: not shipped


# Runs in a fresh interpreter with the sandboxed user folder; prints one JSON line.
_INSTALL_SCRIPT = """
import json, sys
import bpy, addon_utils

zip_path, package = sys.argv[1], sys.argv[2]
result = bpy.ops.extensions.package_install_files(
    filepath=zip_path, repo="user_default", enable_on_install=True
)


def subclasses(cls):
    for sub in cls.__subclasses__():
        yield sub
        yield from subclasses(sub)


ours = sorted(
    {
        c.bl_idname
        for c in subclasses(bpy.types.Operator)
        if c.__module__.startswith(package) and getattr(c, "is_registered", False)
    }
)
ops = {}
for idname in ours:
    category, _, name = idname.partition(".")
    ops[idname] = hasattr(getattr(bpy.ops, category), name)
state = {
    "result": sorted(result),
    "enabled": package in bpy.context.preferences.addons,
    "check": list(addon_utils.check(package)),
    "operators": ops,
}
addon_utils.disable(package, default_set=True)
state["disabled"] = package not in bpy.context.preferences.addons
state["left_registered"] = sorted(
    c.bl_idname
    for c in subclasses(bpy.types.Operator)
    if c.__module__.startswith(package) and getattr(c, "is_registered", False)
)
print("XOF-STATE " + json.dumps(state))
"""


@pytest.fixture(scope="module")
def installed(extension_zip: Path, tmp_path_factory: pytest.TempPathFactory) -> dict:
    user = tmp_path_factory.mktemp("blender-user")
    env = dict(os.environ, BLENDER_USER_RESOURCES=str(user))
    result = _run(
        [sys.executable, "-c", _INSTALL_SCRIPT, str(extension_zip), PACKAGE],
        env=env,
        cwd=str(user),
    )
    lines = [ln for ln in result.stdout.splitlines() if ln.startswith("XOF-STATE ")]
    assert lines, f"no state printed:\n{result.stdout}\n{result.stderr}"
    state: dict = json.loads(lines[-1].removeprefix("XOF-STATE "))
    state["user"] = str(user)
    return state


def test_install_enables_the_addon_in_the_sandbox(installed: dict) -> None:
    assert installed["result"] == ["FINISHED"]
    assert installed["enabled"], "bl_ext.user_default.xof is not among the enabled add-ons"
    assert installed["check"] == [True, True]
    assert (Path(installed["user"]) / "extensions" / "user_default" / "xof").is_dir()


def test_registered_operators_are_reachable(installed: dict) -> None:
    operators: dict[str, bool] = installed["operators"]
    missing = [op for op in EXPECTED_OPERATORS if op not in operators]
    assert not missing, f"not registered: {missing} (registered: {sorted(operators)})"
    unreachable = [op for op, ok in operators.items() if not ok]
    assert not unreachable, f"registered but not in bpy.ops: {unreachable}"


def test_disabling_unregisters_everything(installed: dict) -> None:
    assert installed["disabled"]
    assert installed["left_registered"] == []
