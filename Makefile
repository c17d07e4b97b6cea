# Two commands do all the set-up on a fresh machine:
#   make book   build the jupyter-book into _build/html (the main job)
#   make test   run the test suite (everything; what CI runs)
# and, for everyday work, make test-fast: the tests not marked slow or book (under 2 minutes)
# Both create the virtual environment (.venv) themselves.

PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: book test test-fast env browser smoke clean

book: $(STAMP)
	$(BIN)/initmem book

test: $(STAMP) browser
	$(BIN)/python -m pytest

test-fast: $(STAMP)
	$(BIN)/python -m pytest -m "not slow and not book" -q

env: $(STAMP)

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e ".[book,dev]"
	$(BIN)/python -m ipykernel install --sys-prefix --name python3 --display-name "Python 3 (initmem)" >/dev/null
	touch $(STAMP)

# Headless Chromium for the book's browser test (Debian packages; skipped where apt is unavailable).
browser:
	@command -v chromium >/dev/null && command -v chromedriver >/dev/null || \
	  { if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	      apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium chromium-driver >/dev/null; \
	    else echo "chromium/chromedriver not installed: the browser test will be skipped"; fi; }

smoke: $(STAMP)
	$(BIN)/initmem experiments --preset smoke

clean:
	rm -rf _build book/generated .pytest_cache
