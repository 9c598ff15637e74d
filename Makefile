# webdata: `make run` starts the service on its embedded default (SQLite);
# `make test` installs what the tests need when missing and runs every test.
SHELL := /bin/bash
CARGO ?= cargo
RUN_DIR ?= .webdata
LISTEN ?= 127.0.0.1:3002
FIRECRAWL_LISTEN ?= 127.0.0.1:3003
OWNER_EMAIL ?= owner@webdata.local
# `make run TLS=1` serves HTTPS with a self-signed certificate made on the
# first run in $(RUN_DIR)/tls (for local use; production TLS sits at the
# Ingress, or give WEBDATA_TLS_CERT/WEBDATA_TLS_KEY your own pair).
TLS ?=
SCHEME := $(if $(TLS),https,http)

.PHONY: run test deps lint fuzz bench bench-extraction bench-sweep bench-compare bench-load fuzz-contract

run:
	@# The binary is wherever cargo put it (CARGO_TARGET_DIR, a .cargo/config
	@# build.target-dir, or ./target): cargo says so in its build messages.
	@mkdir -p $(RUN_DIR)
	@$(CARGO) build --release --bin webdata --message-format=json-render-diagnostics \
		| sed -n 's/.*"executable":"\([^"]*\)".*/\1/p' | tail -n 1 > $(RUN_DIR)/bin.path; \
		[ -x "$$(cat $(RUN_DIR)/bin.path)" ] || { echo "make run: cargo build did not produce the webdata binary" >&2; exit 1; }
	@BIN=$$(cat $(RUN_DIR)/bin.path); [ -s $(RUN_DIR)/dev.key ] || $$BIN keys generate > $(RUN_DIR)/dev.key
	@[ -s $(RUN_DIR)/admin.token ] || head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n' > $(RUN_DIR)/admin.token
	@[ -s $(RUN_DIR)/owner.password ] || head -c 12 /dev/urandom | od -An -tx1 | tr -d ' \n' > $(RUN_DIR)/owner.password
	@[ -z "$(TLS)" ] || [ -s $(RUN_DIR)/tls/cert.pem ] || $$(cat $(RUN_DIR)/bin.path) tls self-signed --out $(RUN_DIR)/tls
	@KEY=$$(cat $(RUN_DIR)/dev.key); BIN=$$(cat $(RUN_DIR)/bin.path); \
	echo ""; \
	echo "  webdata is starting on $(SCHEME)://$(LISTEN) (store: sqlite://$(RUN_DIR)/webdata.db)"; \
	echo "  API key:     $$KEY"; \
	echo "  Admin token: $$(cat $(RUN_DIR)/admin.token)"; \
	echo ""; \
	echo "  Dashboard:   $(SCHEME)://$(LISTEN)/dashboard"; \
	echo "  First login: $(OWNER_EMAIL) / $$(cat $(RUN_DIR)/owner.password)  (owner of the default organization)"; \
	echo ""; \
	echo "  Firecrawl-compatible API: http://$(FIRECRAWL_LISTEN)  (e.g. Firecrawl(api_key=\"$$KEY\", api_url=\"http://$(FIRECRAWL_LISTEN)\"))"; \
	echo "  MCP (Streamable HTTP):    $(SCHEME)://$(LISTEN)/mcp  (header Authorization: Bearer $$KEY; stdio: $$BIN mcp)"; \
	echo "  CLI:  WEBDATA_URL=$(SCHEME)://$(LISTEN) WEBDATA_API_KEY=$$KEY $$BIN crawl https://example.com --out example/"; \
	echo ""; \
	echo "  Try:  curl -s $(if $(TLS),--cacert $(RUN_DIR)/tls/cert.pem )$(SCHEME)://$(LISTEN)/v1/team/credit-usage -H \"Authorization: Bearer $$KEY\""; \
	echo "        curl -s $(if $(TLS),--cacert $(RUN_DIR)/tls/cert.pem )$(SCHEME)://$(LISTEN)/v1/scrape -H \"Authorization: Bearer $$KEY\" -H 'Content-Type: application/json' -d '{\"url\":\"https://example.com\"}'"; \
	echo ""; \
	WEBDATA_DATABASE_URL=sqlite://$(RUN_DIR)/webdata.db \
	WEBDATA_LISTEN=$(LISTEN) \
	WEBDATA_FIRECRAWL_LISTEN=$(FIRECRAWL_LISTEN) \
	WEBDATA_BOOTSTRAP_KEY=$$KEY \
	WEBDATA_ADMIN_TOKEN=$$(cat $(RUN_DIR)/admin.token) \
	WEBDATA_BOOTSTRAP_OWNER=$(OWNER_EMAIL) \
	WEBDATA_BOOTSTRAP_OWNER_PASSWORD=$$(cat $(RUN_DIR)/owner.password) \
	$(if $(TLS),WEBDATA_TLS_CERT=$(RUN_DIR)/tls/cert.pem WEBDATA_TLS_KEY=$(RUN_DIR)/tls/key.pem) \
	exec $$BIN serve

# Everything the tests need, installed only when missing.
deps:
	@bash scripts/install-test-deps.sh

lint:
	$(CARGO) fmt --all -- --check
	$(CARGO) clippy --workspace --all-targets -- -D warnings
	bash scripts/check-layout.sh

# Parser fuzzing (cargo-fuzz, nightly): every target in fuzz/ for
# FUZZ_SECONDS each (default 60; `make fuzz FUZZ_SECONDS=600`), one after
# another; prints executions and seconds per target. See scripts/fuzz.sh.
fuzz:
	@bash scripts/fuzz.sh

test: deps
	@bash scripts/test.sh

# Benchmarks on loopback (release build): scrape overhead, crawl throughput,
# HTML -> markdown speed, sitemap parsing, map of a 50k-URL sitemap,
# `webdata crawl --out` vs the same crawl through the API, and the crawl as
# users run it (POST /v1/crawl) beside spider + htmd (PG=1: on PostgreSQL
# with 1 and 2 webdata-worker processes too). Figures go in docs/benchmarks.md.
bench:
	$(CARGO) build --release -p webdata-engine --examples
	./target/release/examples/crawl_bench 2000 32
	./target/release/examples/content_speed --synthetic 300
	for d in /usr/share/doc/postgresql-doc-15/html /usr/share/doc/python3-doc/html; do \
		if [ -d $$d ]; then ./target/release/examples/content_speed $$d 3; fi; done
	./target/release/examples/sitemap_speed
	./target/release/examples/map_speed
	./target/release/examples/frontier_bench 100000
	bash bench/crawl-compare/cli_vs_api.sh
	bash bench/crawl-compare/user_path.sh

# Main-content F1 (issue 3): our onlyMainContent output vs trafilatura and
# Readability.js on public pages with ground truth. Downloads the data and the
# two comparison tools from crates.io / PyPI / npm into .bench-data/ on first
# run; writes bench/extraction/results.md.
bench-extraction:
	bash bench/extraction/fetch.sh
	$(CARGO) build --release -p webdata-engine --example extract_eval
	python3 bench/extraction/eval.py

# Main content over every HTML page installed here (the Rust toolchain's docs,
# /usr/share/doc): no ground truth, it lists failures, lost content and chrome
# that leaks (bench/extraction/sweep.py). Needs lxml from fetch.sh's venv.
bench-sweep:
	bash bench/extraction/fetch.sh
	$(CARGO) build --release -p webdata-engine --example extract_eval
	.bench-data/venv/bin/python3 bench/extraction/sweep.py

# Whole-site crawl side by side (issue 5): webdata (CrawlRunner + SQLite,
# markdown per page) vs the spider crate + htmd, on Debian doc packages
# (python3-doc, postgresql-doc-15) served by a private nginx on 127.0.0.2.
# Installs nginx-light and the doc packages with apt when missing; spider's
# crates come from crates.io. See bench/crawl-compare/run.sh.
bench-compare:
	bash bench/crawl-compare/run.sh

# Ten minutes of sustained mixed load on SQLite, then on PostgreSQL (loopback
# only; DURATION=seconds per store, USERS=clients); figures go in
# docs/reliability.md.
bench-load:
	bash bench/load/run.sh

# The long contract-fuzzing run: schemathesis against /v1/openapi.json for
# CONTRACT_SECONDS (default 1800), stateless and stateful, egress closed to all
# but a loopback test site (a bounded run is part of `make test`).
CONTRACT_SECONDS ?= 1800
fuzz-contract: deps
	$(CARGO) build --bin webdata
	WEBDATA_BIN=$$($(CARGO) metadata --format-version 1 --no-deps | python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')/debug/webdata \
		.venv/bin/python tests/contract/contract.py --max-time $(CONTRACT_SECONDS)
