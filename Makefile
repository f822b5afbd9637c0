# Set-up is idempotent: the venv is (re)built only when pyproject.toml changes.
PY := .venv/bin/python
STAMP := .venv/.installed

.PHONY: setup run test bench-certify clean

$(STAMP): pyproject.toml
	python3 -m venv .venv
	$(PY) -m pip install -q --upgrade pip
	# the CPU build of torch from this machine's disk, before anything can pull a CUDA build
	$(PY) -c "import torch" 2>/dev/null || $(PY) -m pip install -q torch==2.13.0
	$(PY) -m pip install -q -e '.[test]'
	touch $(STAMP)

setup: $(STAMP)

# The main job on small defaults: certify the default tier-1 dataset, then re-verify it.
run: $(STAMP)
	.venv/bin/certify --atoms 4 --tier 1 --out data/tier1-a4
	.venv/bin/certify --verify data/tier1-a4

test: $(STAMP)
	$(PY) -m pytest -q

bench-certify: $(STAMP)
	$(PY) benchmarks/certify_bench.py --tiers 1,2

clean:
	rm -rf .venv data runs
