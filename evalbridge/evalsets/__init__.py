"""Verbs about what an eval set's labels can support: prediction-powered evaluation with a judge's labels (``ppi``)."""
