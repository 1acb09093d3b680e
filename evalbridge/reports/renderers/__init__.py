"""One module per report format; each declares ``FORMAT`` (:class:`evalbridge.views.formats.ReportFormat`).

:func:`evalbridge.views.formats.report_formats` finds every module here: a new format is a new module,
and the command line, configs and the pipeline offer it with no other edit.
"""
