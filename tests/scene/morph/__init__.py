"""Tests of addon/scene/morph."""
