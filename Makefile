# The two commands: `make run` (demo on real data) and `make test` (the whole suite).
# `make run` installs the package and its runtime dependencies only; `make test` adds the test, Spark, Spark
# Connect, MLflow and datasets (ir_datasets) extras. One stamp each: `make run` after `make test` installs nothing, `make test` after `make run`
# adds only the extras.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
RUN_STAMP  := $(VENV)/.installed-run
TEST_STAMP := $(VENV)/.installed-test
CACHE  := .cache
WHEEL  := $(CACHE)/capreolus-0.2.6-py3-none-any.whl
ROBUST := $(CACHE)/robust04

.PHONY: install install-run run test bench bench-quick bench-doors bench-diagnose demo-data chromium report-picture clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

# --no-compile: the demo's modules are compiled when first imported, not every module of every dependency
# up front (about 15 s of CPU less from a fresh clone; bench/README.md, "The first run")
$(RUN_STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install -q --no-compile -e .
	touch $(RUN_STAMP)

# the full install also satisfies `make run` (its stamp is touched too). The `rbo` package, a test oracle of
# rank-biased overlap, is installed without its dependencies: its metadata asks numpy < 2 (its code runs on
# numpy 2), which in the test extra would make pip take numpy 1 and an older pandas for the whole venv.
$(TEST_STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install -q -e ".[test,spark,spark-connect,mlflow,datasets]"
	$(BIN)/python -m pip install -q --no-deps "rbo==0.1.3"
	touch $(TEST_STAMP) $(RUN_STAMP)

install-run: $(RUN_STAMP)

install: $(TEST_STAMP)

# TREC Robust 2004 qrels and a BM25+RM3 run, read out of the capreolus 0.2.6 wheel (not installed).
$(WHEEL): | $(BIN)/python
	$(BIN)/python -m pip download -q --no-deps --only-binary=:all: --dest $(CACHE) capreolus==0.2.6

$(ROBUST)/rob04_yang19_rm3.run: $(WHEEL)
	$(BIN)/python -c "import sys, zipfile; z = zipfile.ZipFile(sys.argv[1]); [open(sys.argv[2] + '/' + n.rsplit('/', 1)[1], 'wb').write(z.read(n)) for n in ('capreolus/data/qrels.robust2004.txt', 'capreolus/data/rob04_yang19_rm3.run')]" $(WHEEL) $(shell mkdir -p $(ROBUST) && echo $(ROBUST))

demo-data: $(ROBUST)/rob04_yang19_rm3.run

run: install-run demo-data
	$(BIN)/evalbridge run configs/demo.yaml

# Headless Chromium for the tests that open report.html in a browser (tests/test_html_report.py): Debian's
# chromium package, installed as root where it is missing (Playwright drives it; no browser is downloaded).
chromium:
	@command -v chromium >/dev/null 2>&1 || { [ "$$(id -u)" = 0 ] && apt-get update -qq && \
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; } || \
		echo "chromium is missing and could not be installed (root and apt-get needed): the browser tests will skip"

# The whole suite on every core (pytest-xdist; TEST_WORKERS=0 runs it in one process). mypy --strict on the
# package (settings in pyproject.toml's [tool.mypy]) is one of its tests (tests/test_typing.py): a type error fails
# `make test` (one run for the whole suite, shared by the workers).
TEST_WORKERS ?= auto
test: install chromium
	$(BIN)/python -m pytest -n $(TEST_WORKERS)

bench: install
	$(BIN)/python bench/run.py
	$(BIN)/python bench/compare.py
	$(BIN)/python bench/diff.py
	$(BIN)/python bench/tiers.py
	$(BIN)/python bench/slices.py
	$(BIN)/python bench/pool.py
	$(BIN)/python bench/diagnose.py
	$(BIN)/python bench/report_html.py
	$(BIN)/python bench/tracking.py
	$(BIN)/python bench/retrieval_logs.py
	$(BIN)/python bench/verbs.py
	$(BIN)/python bench/commands.py

# 100 runs x 5,000 queries x depth 1,000 pooled at depth 100 and diagnosed in one process (issue 27: 120 s, 4 GiB)
bench-diagnose: install
	$(BIN)/python bench/diagnose.py

bench-quick: install
	$(BIN)/python bench/run.py --quick
	$(BIN)/python bench/compare.py --quick
	$(BIN)/python bench/diff.py --queries 10000 --repeat 1
	$(BIN)/python bench/tiers.py --systems 20 --queries 1000 --resamples 500
	$(BIN)/python bench/slices.py --queries 10000 --repeat 1
	$(BIN)/python bench/report_html.py --queries 10000
	$(BIN)/python bench/tracking.py --queries 10000
	$(BIN)/python bench/retrieval_logs.py --queries 1000 --repeat 1

# Only the doors (every way in: paths, read_*, tables, the command line, a config, a RAG log) at 7M rows, ~10 min
# on a quiet machine; `make bench` measures them too, with everything else.
bench-doors: install
	$(BIN)/python bench/run.py --doors

# docs/img/report.png, the picture of report.html in README.md, and docs/img/page-1400.png / page-400.png, its first
# screen at 1400 and 400 px in docs/outputs.md: the TREC DL 2019 runs of examples/ (configs/dl19.yaml) rendered as
# report.html and photographed in headless Chromium.
report-picture: install chromium
	$(BIN)/python tools/report_picture.py

clean:
	rm -rf $(VENV) $(CACHE) reports configs/reports
