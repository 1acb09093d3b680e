"""The ground every stage stands on: parameters' rules, numbers, names, wording, JSON, rankings, progress."""
