# The two set-up commands of the README:
#   make demo   installs everything into .venv/ and runs the demonstration
#   make test   installs everything into .venv/ and runs all the tests (Rust and Python)
# Nothing here relies on anything installed by hand beyond Python 3.11, Rust and gcc.

VENV   := .venv
PIP    := $(VENV)/bin/pip
PY     := $(VENV)/bin/python

.PHONY: demo test install browser rust-test py-test bench clean

$(PY):
	python3 -m venv $(VENV)
	$(PIP) install -q --upgrade pip

install: $(PY)
	$(PIP) install -q -e '.[dev]'

demo: install
	$(VENV)/bin/eventpath demo --out out/demo

rust-test:
	cargo test --workspace --exclude eventpath-py

# The report's test opens every page in a real browser: Debian's chromium, driven by Playwright
# (never `playwright install`, which downloads its own). Installed once; quiet when present.
browser:
	@command -v chromium >/dev/null || (apt-get update -q && apt-get install -y -q chromium >/dev/null)

py-test: install browser
	$(VENV)/bin/pytest -q

test: install rust-test py-test

bench: install
	$(VENV)/bin/eventpath bench

clean:
	rm -rf $(VENV) target out
