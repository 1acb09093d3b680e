"""How each result shows itself: its tables as data (:mod:`.table`), the one registry of output formats
(:mod:`.formats`) and the one table of significance markers; below every result type, so a result's
``__str__`` / ``to_markdown`` / ``_repr_html_`` is one call into this package. The reports themselves
(:mod:`evalbridge.reports`) are above."""
