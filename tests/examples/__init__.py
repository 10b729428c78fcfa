"""Tests of the bundled examples: the demo character and its generator."""
