"""Skeletal and object animation: keys sampled into Blender channels and key handles
(``key_sampling``, ``position_spline``, ``bezier_keys``: numpy, no bpy), then slotted actions,
the animation step and the animation-only importer (``actions``, ``animation``, ``step``,
``animation_only``).
"""
