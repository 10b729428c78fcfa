"""Cloth and soft bodies in Blender: the cloth data kept on a mesh (``data``) and its import step,
solver colliders from a collection, the per-object frame cache, the live runtime the frame
handler steps, the Geometry Nodes override for deformed meshes, and baking.
"""
