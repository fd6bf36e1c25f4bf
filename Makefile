# The two set-up commands of the README:
#   make demo   installs everything into .venv/ and runs the demonstration
#   make test   installs everything into .venv/ and runs all the tests (Rust and Python)
# Nothing here relies on anything installed by hand beyond Python 3.11, Rust and gcc.

VENV   := .venv
PIP    := $(VENV)/bin/pip
PY     := $(VENV)/bin/python

.PHONY: demo test install pgo browser rust-test py-test bench clean

$(PY):
	python3 -m venv $(VENV)
	$(PIP) install -q --upgrade pip

# The extension is built profile-guided where this rustc's LLVM reads the checked-in profile
# (pgo/pgo.sh flags; else plain, with one line saying why): same results, a faster model.
install: $(PY)
	@flags="$$(sh pgo/pgo.sh flags)"; \
	RUSTFLAGS="$${RUSTFLAGS:-} $$flags" EVENTPATH_BUILD="$${flags:+pgo}" $(PIP) install -q -e '.[dev]'

# Regenerate pgo/eventpath.profdata.gz after changes to the model's hot code (needs
# `rustup component add llvm-tools`), then rebuild with it.
pgo: $(PY)
	sh pgo/pgo.sh train
	$(MAKE) install

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
