"""The core of the import: options and the build context, meshes (with the numpy face plan),
materials and textures, the frame hierarchy, kept extras, rollback and progress. ``convert``
and ``faces`` are numpy planners (no bpy); the rest builds Blender data.
"""
