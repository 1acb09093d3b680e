"""One evaluation: prepare, cut, evaluate, and the results (with their slices) it returns."""
