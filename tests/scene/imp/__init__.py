"""Tests of addon/scene/imp."""
