"""Morph animation: what MorphAnimationSets become, planned without bpy (``plan``), then shape
keys and their actions (``build``, ``actions``, ``shape_keys``), the morph step, and "Add Shape
Keys from .X" (``shape_key_import``).
"""
