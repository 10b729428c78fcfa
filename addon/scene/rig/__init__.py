"""Skinning: which frames become bones and their bind/rest matrices (``skeleton``,
``skin_weights``, ``rig_math``: numpy planners, no bpy), then the armature, the skinned meshes'
vertex groups and the rig build step (``armature``, ``skinning``, ``step``).
"""
