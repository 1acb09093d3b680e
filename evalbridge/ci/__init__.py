"""Retrieval gates inside a test suite and a CI job, and the pytest plugin."""
