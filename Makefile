# Shortcuts for the scripts the README documents.
.PHONY: run test bench ptx
run:
	./scripts/run.sh
test:
	./scripts/test.sh
bench:
	.venv/bin/python bench/interp.py
ptx:
	.venv/bin/python scripts/regenerate_ptx.py
