"""Tests of jungle_train."""
