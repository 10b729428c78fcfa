"""Blender data -> a .X document: the exact inverse of the importer (see ``exporter``).

Kept empty of imports: the importer's step discovery walks ``addon.scene`` and imports this
package, which must stay cheap and free of build steps.
"""
