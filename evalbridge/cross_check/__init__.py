"""The cross-check: every metric on the reference and on each library, every difference explained."""
