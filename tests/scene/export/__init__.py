"""Tests of addon/scene/export."""
