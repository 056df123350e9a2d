# Sluice — the two commands a newcomer needs are `make run` and `make test`.
# Every target installs what it needs first, so both work on a fresh clone
# with only Node.js 20 (and npm) on the machine.

SHELL := /bin/bash
NODE_MODULES_STAMP := node_modules/.install-stamp
# Seeds per simulation for `make sim` / `make sim-mutants`; empty: each simulation's own default (Raft 2000, cluster 200)
SEEDS ?=
SEED ?=

.PHONY: install build test test-only lint run bench bench-peers bench-compare sim sim-mutants sim-rate sim-money chaos chaos-money clean interop-tools

install: $(NODE_MODULES_STAMP)

$(NODE_MODULES_STAMP): package.json package-lock.json
	npm ci --no-audit --no-fund
	@touch $@

# tsc, then the browser bundle dist/browser/sluice.js (esbuild; prints its size).
build: install
	npx tsc -p tsconfig.json
	npx tsc -p tsconfig.console.json
	@chmod +x dist/src/cli/main.js
	node scripts/build-browser.mjs

lint: install
	npx eslint .

# install + build + lint + every test (unit, simulation, integration, and the
# Kafka-client interop tests, whose tools interop-tools.sh installs first; it
# never fails, and a tool it cannot get makes that tool's tests skip).
# Ends with a plain "N passed, N failed" line that CI reads. Test files run
# in two mocha workers (TEST_JOBS): most of the suite waits on real processes
# and sockets, so two at once fit this 2-core machine and halve the wall time.
TEST_JOBS ?= 2
test: build lint
	@./scripts/interop-tools.sh || true
	@mkdir -p .tmp
	@set -o pipefail; npx mocha --parallel --jobs $(TEST_JOBS) 2>&1 | tee .tmp/mocha.log; status=$$?; \
	  passed=$$(grep -E '^ *[0-9]+ passing' .tmp/mocha.log | grep -Eo '[0-9]+' | head -1); \
	  failed=$$(grep -E '^ *[0-9]+ failing' .tmp/mocha.log | grep -Eo '[0-9]+' | head -1); \
	  echo "$${passed:-0} passed, $${failed:-0} failed"; exit $$status

# Starts a local 3-node cluster once `sluice local` exists (the CLI issue);
# until then it says so and fails.
run: build
	node dist/src/cli/main.js local --nodes 3 --data-dir ./data

# Every benchmark scenario (or `make bench BENCH="produce scale"`); `compare`
# runs Sluice against Apache Kafka, NATS JetStream and Redis Streams — `make bench-peers`
# installs those first. docs/benchmarks.md records the figures.
bench: build
	node dist/bench/run.js $(BENCH)

bench-peers:
	./scripts/bench-peers.sh

# kcat, the Java client and Kafka's tools, franz-go, confluent-kafka for the
# interop tests (test/interop/); `make test` runs it too.
interop-tools: install
	./scripts/interop-tools.sh

# The side-by-side suite alone: `make bench-compare [PROFILE=quick|full] [SYSTEMS=sluice,kafka,nats,redis]`.
PROFILE ?= full
bench-compare: build
	node dist/bench/suite/compare.js --profile $(PROFILE) $(if $(SYSTEMS),--systems $(SYSTEMS))

# Long deterministic simulation runs: `make sim SEEDS=5000` or `make sim SEED=1234` (replays one
# seed bit for bit, full trace). Covers the Raft sim (test/sim/*.sim.ts), the controller sim and
# the whole-cluster sim (test/sim/cluster/*.sim.ts: real nodes on one simulated clock, network, disk).
sim: build
	SLUICE_SIM_SEEDS=$(SEEDS) SLUICE_SIM_SEED=$(SEED) npx mocha --no-config --timeout 0 'dist/test/sim/**/*.sim.js'

# Every deliberate bug of src/util/mutants.ts switched on in turn against the cluster sim, the long
# form (make test runs the short one); docs/reliability.md records the seeds each needed.
sim-mutants: build
	SLUICE_SIM_MUTANTS=long SLUICE_SIM_SEEDS=$(SEEDS) npx mocha --no-config --timeout 0 --exit dist/test/sim/mutants.test.js

# Seeds per second of the cluster simulation on this machine (`make sim-rate [SECONDS=60]`).
sim-rate: build
	node dist/test/sim/cluster/rate.js $(or $(SECONDS),60)

# Jepsen-style fault injection (issue 9): `make chaos [SECONDS=600] [SEED=x] [ROUNDS=n] [PROFILE=combined|with-brokers]`.
# A failing round prints its seed, fault schedule and history path, and exits 1.
CHAOS_SECONDS := $(or $(SECONDS),600)
chaos: build
	node dist/test/chaos/run.js --seconds $(CHAOS_SECONDS) $(if $(SEED),--seed $(SEED)) $(if $(ROUNDS),--rounds $(ROUNDS)) $(if $(filter combined with-brokers,$(PROFILE)),--profile $(PROFILE))

# tx_money (issue 18): transfer transactions, zombie producers and an exactly-once read-process-write stage
# under coordinator, partition-leader and controller kills (test/chaos/money-*.ts; make test runs one short round).
# `make chaos-money [SECONDS=300] [SEED=x] [ROUNDS=n]`.
chaos-money: build
	node dist/test/chaos/money-run.js --seconds $(or $(SECONDS),300) $(if $(SEED),--seed $(SEED)) $(if $(ROUNDS),--rounds $(ROUNDS))

# The tx_money profile of the whole-cluster simulation alone: `make sim-money [SEEDS=200] [SEED=x]` (make sim runs it too).
sim-money: build
	SLUICE_SIM_SEEDS=$(SEEDS) SLUICE_SIM_SEED=$(SEED) npx mocha --no-config --timeout 0 --exit dist/test/sim/cluster/money.sim.js

clean:
	rm -rf dist node_modules data .tmp
