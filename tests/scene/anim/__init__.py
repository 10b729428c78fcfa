"""Tests of addon/scene/anim."""
