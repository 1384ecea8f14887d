# Two entry points on a fresh machine: `make demo` and `make test`. Both build .venv first.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin

$(BIN)/brainlab: pyproject.toml
	$(PY) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e .  # what the demo uses: no test tools, no pyspark/Java stack
	$(BIN)/python -m ipykernel install --sys-prefix --name python3 >/dev/null
	touch $@

.PHONY: demo test lint browser java bytecode
demo: $(BIN)/brainlab bytecode
	$(BIN)/brainlab demo

# The package's bytecode, as a wheel install writes it: an editable install compiles nothing,
# and where PYTHONDONTWRITEBYTECODE is set (this machine, many containers) Python never writes
# it, so every `brainlab` command, kernel and test worker compiled the modules it imports on
# each start (a command 0.02-0.08 CPU-s more, 6-16%: benchmarks/bench_bytecode.py; the suite
# starts ~750). Up-to-date files are skipped: after an edit only the changed ones compile.
bytecode: $(BIN)/brainlab
	$(BIN)/python -m compileall -q brainlab tests

browser:
	@{ command -v chromium >/dev/null 2>&1 && [ -e /usr/share/fonts/truetype/dejavu/DejaVuSans.ttf ]; } || \
	  { [ "$$(id -u)" = 0 ] && apt-get update -qq && \
	    apt-get install -y -qq chromium fonts-dejavu-core >/dev/null; } || \
	  echo "chromium missing: browser tests will fail (apt-get install chromium fonts-dejavu-core)"

# Spark's Java runtime (the lake tests run Spark in local mode), from Debian like chromium
java:
	@command -v java >/dev/null 2>&1 || \
	  { [ "$$(id -u)" = 0 ] && apt-get update -qq && \
	    apt-get install -y -qq openjdk-17-jre-headless >/dev/null; } || \
	  echo "java missing: Spark tests will fail (apt-get install openjdk-17-jre-headless)"

# the test tools, the Spark extra and the price base's package, on top of the demo's install;
# pyspark at the lower bound pyproject.toml declares, so the tests run on the oldest version
# a user may have (tests/test_lake.py checks the two agree)
PYSPARK_LOWEST = $(shell sed -n 's/^spark = \["pyspark>=\([0-9.]*\)".*/\1/p' pyproject.toml)
$(VENV)/.test-extras: $(BIN)/brainlab pyproject.toml
	$(BIN)/pip install --quiet -e '.[dev,spark,prices]' 'pyspark==$(PYSPARK_LOWEST)'
	touch $@

# --durations=25: the slowest tests, printed after every run (a slow test shows up at once).
# -n 4 on two cores: the tests wait on JVMs, kernels, chromium and commands, and four workers
# fill those waits; beside a CPU hog 10:10 against 11:22 with -n 2, quiet 8:55 (docs/testing.md
# "Stop 27", "How the run is spread over four workers")
test: $(VENV)/.test-extras browser java bytecode
	$(BIN)/python -m pytest -n 4 --dist loadgroup -q --durations=25

lint: $(VENV)/.test-extras
	$(BIN)/ruff check brainlab tests benchmarks
