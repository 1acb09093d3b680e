"""Decisions from evaluated runs: comparisons, gates, power, standings, run diffs."""
