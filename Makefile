# Set-up is idempotent: the venv is (re)built only when pyproject.toml changes.
PY := .venv/bin/python
STAMP := .venv/.installed

.PHONY: setup run demo-oracle demo-programs test test-fast test-slow test-cluster bench-certify bench-certify-programs bench-tracker bench-tracker-hard bench-tracker-tier2 bench-tracker-registers bench-programs bench-self-distill bench-tracker-speed bench-time-to-exact bench-prover clean

$(STAMP): pyproject.toml
	python3 -m venv .venv
	$(PY) -m pip install -q --upgrade pip
	# torch 2.13.0 (the CPU build) only where no torch is installed: a CUDA build already there is kept
	$(PY) -c "import torch" 2>/dev/null || $(PY) -m pip install -q torch==2.13.0
	$(PY) -m pip install -q -e '.[test,cluster]'
	touch $(STAMP)

setup: $(STAMP)

# The main job, the whole pipeline in minutes: certify the default tier-1 dataset and re-verify
# it in Lean; train a tracker with the fast schedule (one thread, so that two clones on one machine
# give the same bits; it stops once exact on a few held-out chains of every length for two checks
# in a row) and evaluate it on the 448 held-out chains of every length (of 512) the checks never read,
# 8 to 4,096 events; search with it as imagination at one kernel call per problem. A finished run is
# kept, never trained again; an interrupted one is resumed from its last checkpoint (--resume, which
# starts the run where there is none).
run: $(STAMP)
	.venv/bin/certify --atoms 4 --tier 1 --out data/tier1-a4
	.venv/bin/certify --verify data/tier1-a4
	test -f runs/demo-fast/report.json || .venv/bin/train-tracker --schedule fast --threads 1 --check-every 250 --out runs/demo-fast --resume
	.venv/bin/prove --budget-calls 1 --tracker runs/demo-fast --problems 20 --out runs/demo-prove

# A small oracle for the oracle example of docs/reference/api.md (a few minutes): make run's dataset
# again, with Lean's verdicts on five probe rewrites at every step (test splits to 256 events), in its
# own directory; then the verdict head trained briefly on it at one thread (kept once finished, resumed
# when interrupted, as make run's tracker).
demo-oracle: $(STAMP)
	.venv/bin/certify --atoms 4 --tier 1 --probes --test-lengths 8,16,64,256 --out data/tier1-a4-probes
	test -f runs/demo-oracle/report.json || .venv/bin/train-oracle --data data/tier1-a4-probes --steps 500 --threads 1 --out runs/demo-oracle --resume

# A first programs dataset and tracker in minutes: the small preset (500 training programs, 32 test
# programs of 16, 64 and 256 statements) certified, then a register per variable trained on it with the
# Bits recipe at one thread (it stops once exact on every test length for two checks in a row) and
# evaluated on its test programs (kept once finished, resumed when interrupted, as make run's tracker);
# the seconds it all took are printed last. Measured on 2 cores beside a training run: 1 min 56 s to
# certify, 5 min 9 s to train (exact 1.000 at 16, 64 and 256 from step 250, stopped at 500) and evaluate,
# 7 min 5 s in all.
demo-programs: $(STAMP)
	@mkdir -p runs && date +%s > runs/.demo-programs-start
	.venv/bin/certify --domain programs --preset small --out data/programs-bits-small
	test -f runs/demo-programs/report.json || .venv/bin/train-tracker --data data/programs-bits-small --arch registers --set moves=hard --width 32 --steps 4000 --check-every 250 --eval-chains 32 --threads 1 --eval-threads 1 --out runs/demo-programs --resume
	@echo "make demo-programs: $$(( $$(date +%s) - $$(cat runs/.demo-programs-start) )) s"

test: $(STAMP)
	$(PY) -m pytest -q

# The inner loop: every test that needs no Lean binary (under a minute). A test needs Lean when
# it uses the lean or core fixture, runs in other processes (the wheel, Ray clusters), or starts a
# Lean process at all (it is then skipped); see tests/conftest.py.
test-fast: $(STAMP)
	$(PY) -m pytest -q --no-lean

# The long tests make test leaves out (marked slow): the Ray cluster tests, and the like
test-slow: $(STAMP)
	$(PY) -m pytest -q -m slow

# certify, a grid and an oracle batch on two-node Ray clusters started on this machine (part of make test-slow)
test-cluster: $(STAMP)
	$(PY) -m pytest -q -m slow tests/test_cluster.py tests/test_grid_cluster.py tests/test_oracle_cluster.py

bench-certify: $(STAMP)
	$(PY) -m benchmarks.certify_bench --tiers 1,2

# The default programs datasets (Bits, Arithmetic) from an empty store, kept in data/ (about 20 minutes each on 2 cores)
bench-certify-programs: $(STAMP)
	$(PY) -m benchmarks.certify_programs --keep data

# The registered tracker comparison: 15 runs of 12,000 steps, two at a time (hours on 2 cores;
# finished runs are reused and interrupted ones resumed, so it can be run in several sittings).
bench-tracker: $(STAMP)
	$(PY) -m benchmarks.tracker_comparison --workers 2

# The registered comparison on the hard domains: tier 2 and five atoms, 24,000 steps a
# run, two at a time (many hours on 2 cores; resumable like bench-tracker). Its datasets first, by the
# checker that certified the registered runs' datasets (the same chains; the same dataset ids).
bench-tracker-hard: $(STAMP)
	.venv/bin/certify --atoms 4 --tier 2 --checker elaborator --out data/tier2-a4
	.venv/bin/certify --atoms 4 --tier 2 --chains 50000 --checker elaborator --out data/tier2-a4-c50k
	.venv/bin/certify --atoms 5 --tier 1 --chains 50000 --checker elaborator --out data/tier1-a5-c50k
	$(PY) -m benchmarks.tracker_hard --workers 2

# The registered tier-2 batch: the tier2 schedule (the recipe the diagnosis on validation chains
# picked) on tier 2 and five atoms, 24,000 steps a run, two at a time (hours; resumable).
bench-tracker-tier2: $(STAMP)
	$(PY) -m benchmarks.tracker_tier2 batch-datasets
	$(PY) -m benchmarks.tracker_tier2 batch --workers 2

# The registered registers-recipe batch: the registers schedule on held-out events, held-out pairs, six
# atoms and tier 2, certified afresh into data/registers/, three seeds each, one run at a time at one
# thread, cheapest first (the six-atom and tier-2 runs about an hour each; resumable).
bench-tracker-registers: $(STAMP)
	$(PY) -m benchmarks.tracker_registers

# The registered comparison on programs (Bits and Arithmetic; hours at two runs of one thread)
bench-programs: $(STAMP)
	$(PY) -m benchmarks.programs_comparison --workers 2

bench-self-distill: $(STAMP)
	$(PY) -m benchmarks.self_distill_comparison --workers 2

bench-tracker-speed: $(STAMP)
	$(PY) -m benchmarks.tracker_speed

# The fast schedule on its seven registered seeds as make run trains it, two runs side by side at one thread each.
bench-time-to-exact: $(STAMP)
	$(PY) -m benchmarks.time_to_exact --candidates fast --seeds 0,1,2,3,4,5,6 --workers 2 --threads 1 --check-every 250

# The trackers come from bench-tracker (plain-free: `python -m benchmarks.tracker_comparison --arms plain-free --seeds 0`);
# a run whose report is already in results/prover-runs with the same settings is reused.
COMPARISON := runs/comparison/recurrence
bench-prover: $(STAMP)
	$(PY) -m benchmarks.prover_bench --data data/tier1-a4 \
		--trackers $(COMPARISON)-combo-s0,$(COMPARISON)-combo-s1,$(COMPARISON)-combo-s2 \
		--prefix-trackers $(COMPARISON)-plain-s0,$(COMPARISON)-plain-free-s0,$(COMPARISON)-combo-s0 --prefix 4096

clean:
	rm -rf .venv data runs
