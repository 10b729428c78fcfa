"""Tests of addon/scene/rig."""
