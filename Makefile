# Two commands do all the set-up on a fresh machine:
#   make book   build the jupyter-book into _build/html (the main job)
#   make test   run the test suite (everything; what CI runs)
# and, for everyday work, make test-fast: the tests not marked slow or book (about a minute on 2 cores)
# Both create the virtual environment (.venv) themselves.

PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: book pdf test test-fast check-book lint env dist browser slurm tex smoke clean

book: $(STAMP)
	$(BIN)/initmem book

# The book as one PDF, _build/latex/initmem.pdf (after the HTML build, which executes what changed). Needs TeX:
# the tex target installs it with apt where it is missing (about 600 MB of downloads; it says so before it starts).
pdf: book tex
	$(BIN)/jupyter-book build . --builder pdflatex

# Two pytest-xdist workers (one per core), a test file to a worker (its module fixtures, the book build and the notebooks'
# smoke run, are built once), handed out in collection order: tests/conftest.py collects the longest files first (no
# reorder by test count), so that the short ones fill in around them. The 15 slowest tests are listed at the end.
# make test draws hypothesis's examples as a fixed function of each test (the "ci" profile of tests/conftest.py), so
# that its verdict repeats; make test-fast draws new ones each time, to find new counterexamples.
XDIST := -n 2 --dist loadfile --no-loadscope-reorder
test: $(STAMP) browser slurm
	$(BIN)/python -m pytest $(XDIST) --hypothesis-profile=ci --durations=15

# Executes nothing: exit 0 when every committed page of book/generated is current, else 1 naming each stale page and
# what changed (tests/test_book_check.py checks the same under make test).
check-book: $(STAMP)
	$(BIN)/initmem book --check

test-fast: $(STAMP)
	$(BIN)/python -m pytest $(XDIST) -m "not slow and not book" -q

# ruff (configured in pyproject.toml): the linter, then the formatter's check; neither changes a file.
LINTED := src notebooks tests benchmarks scripts
lint: $(STAMP)
	$(BIN)/ruff check $(LINTED)
	$(BIN)/ruff format --check $(LINTED)

env: $(STAMP)

# The package alone: the wheel and the sdist in dist/ (python -m build, in an isolated build environment). The book
# offers the wheel as a download (initmem.book.dist); `pip install dist/initmem-*.whl` installs it anywhere.
dist: $(STAMP)
	rm -rf dist
	$(BIN)/python -m build --outdir dist .

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

# A single-node SLURM for the cluster tests (Debian packages slurmctld, slurmd, munge, about 25 s; skipped where apt
# is unavailable). The tests start and stop the daemons themselves, on 127.0.0.1.
SLURM_PACKAGES := slurmctld slurmd slurm-client munge
slurm:
	@command -v slurmctld >/dev/null && command -v slurmd >/dev/null && command -v sbatch >/dev/null && \
	  command -v munged >/dev/null || \
	  { if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	      apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
	        $(SLURM_PACKAGES) >/dev/null; \
	    else echo "slurmctld/slurmd/munge not installed: the SLURM test will be skipped"; fi; }
	@command -v slurmctld >/dev/null && echo "SLURM for the cluster tests: $$(slurmctld -V)" || true

# XeLaTeX, latexmk, the LaTeX packages and fonts jupyter-book's LaTeX uses, and rsvg-convert for the SVG figures.
TEX_PACKAGES := texlive-xetex texlive-latex-extra texlive-fonts-recommended texlive-fonts-extra latexmk \
                fonts-freefont-otf librsvg2-bin
# Before installing, it says what and how much (the sum of the downloads apt lists); apt then shows each download
# and each package as it is set up.
tex:
	@command -v xelatex >/dev/null && command -v latexmk >/dev/null && command -v rsvg-convert >/dev/null && \
	  kpsewhich bbm.sty >/dev/null && fc-list | grep -q FreeSerif || \
	  { if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	      apt-get update -qq && \
	      mb=$$(apt-get install --print-uris -qq -y --no-install-recommends $(TEX_PACKAGES) | \
	            awk '{ bytes += $$3 } END { printf "%.0f", bytes / 1e6 }') && \
	      echo "make pdf: installing TeX with apt-get: $(TEX_PACKAGES)" && \
	      echo "make pdf: about $$mb MB to download (apt-get says the disk space next); this takes minutes" && \
	      DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends $(TEX_PACKAGES); \
	    else echo "TeX is missing: install $(TEX_PACKAGES) (Debian names), then run make pdf again"; exit 2; fi; }

smoke: $(STAMP)
	$(BIN)/initmem experiments --preset smoke

# Untracked build output only: book/generated/ holds the committed executed notebooks (the record) and stays; only
# what a failed or interrupted execution leaves there goes.
clean:
	rm -rf _build .pytest_cache dist build book/generated/_failed
	rm -f book/generated/.*.running.ipynb
