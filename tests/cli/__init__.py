"""Tests of jungle_cli."""
