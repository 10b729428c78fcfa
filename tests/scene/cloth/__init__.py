"""Tests of addon/scene/cloth."""
