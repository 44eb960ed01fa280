"""Tests of jungle_agents."""
