"""The data model: Qrels and Run, their columnar rows and checks, and the Settings that decide a number."""
