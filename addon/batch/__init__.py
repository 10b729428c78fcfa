"""Batch conversion of .X files (``python -m addon.batch convert ...``).

A command-line tool, not part of the extension Blender loads: the extension build leaves this
package out (``blender_manifest.toml``), and nothing in the extension imports it. The parent
process (this package without bpy) finds the inputs, hands one task per file to worker
processes that each import bpy once, and collects the results; ``--scheduler`` sends the same
tasks to a Dask distributed cluster instead. See ``cli.py`` for the command.
"""
