"""xof's code: the format layer (xfile), the solvers (sim) and the Blender builders (scene)."""
