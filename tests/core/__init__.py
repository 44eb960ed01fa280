"""Tests of jungle_core."""
