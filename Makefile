# sieve: build, test and run. Paths derive from this file's own location, so
# `make -C path/to/sieve` works from anywhere.
ROOT := $(patsubst %/,%,$(dir $(abspath $(lastword $(MAKEFILE_LIST)))))

SAN ?= 0
PREFIX ?= /usr/local
CC ?= cc

WARNINGS := -Wall -Wextra -Werror -Wconversion -Wstrict-prototypes -Wshadow
ifeq ($(SAN),1)
BUILD := $(ROOT)/build/san
OPT := -O1 -g -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
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
CFLAGS := -std=c11 $(OPT) $(WARNINGS) -ffp-contract=off -fPIC -MMD -MP
# The oracle's row loops are vectorized (oracle/softmax.c); no contraction into fused
# multiply-adds, so every build gives the same bits.
ORACLE_CFLAGS := -ftree-vectorize -fno-trapping-math
VERSION := $(shell sed -n 's/^#define SIEVE_VERSION "\(.*\)"/\1/p' $(ROOT)/oracle/sieve.h)
LDLIBS := -lm

# Debian packages the build and the tests need; `make deps` installs the missing ones.
DEB_PACKAGES := libcjson-dev libcriterion-dev pkg-config python3-torch python3-numpy python3-jsonschema \
  clang libclang-rt-14-dev valgrind
# Debian's python3, which has python3-torch; not whichever python3 is first on PATH.
PYTHON := /usr/bin/python3

ORACLE_SRC := $(wildcard $(ROOT)/oracle/*.c)
HARNESS_LIB_SRC := $(filter-out $(ROOT)/harness/main.c,$(wildcard $(ROOT)/harness/*.c))
SUITE_SRC := $(wildcard $(ROOT)/suites/*.c)

obj = $(patsubst $(ROOT)/%.c,$(BUILD)/obj/%.o,$(1))
ORACLE_OBJ := $(call obj,$(ORACLE_SRC))
HARNESS_LIB_OBJ := $(call obj,$(HARNESS_LIB_SRC))
SUITE_OBJ := $(call obj,$(SUITE_SRC))

LIB_A := $(BUILD)/libsieve.a
LIB_SO := $(BUILD)/libsieve.so
CLI := $(BUILD)/sieve
TESTS := $(BUILD)/sieve-tests
EXAMPLES := $(ROOT)/harness/examples/requests.jsonl

# The deliberately wrong ports of suites/mutants/catalogue.json (one entry a line; the first is
# the faithful control), each built twice: in float64 and with the port's float32 arithmetic.
CATALOGUE := $(ROOT)/suites/mutants/catalogue.json
MUTANTS := $(filter-out port-faithful,$(shell sed -n 's/^  "\([a-z0-9-]*\)": {.*/\1/p' $(CATALOGUE)))
MUTANT_LIBS := $(patsubst %,$(BUILD)/mutants/lib%.so,port-faithful $(MUTANTS)) \
  $(patsubst %,$(BUILD)/mutants-f32/lib%.so,port-faithful $(MUTANTS))
BROKEN := no-symbol null-table wrong-abi unknown-code segfault half-row vocab-error bad-token
BROKEN_LIBS := $(patsubst %,$(BUILD)/mutants/libbroken-%.so,$(BROKEN))
C_ADAPTER := $(BUILD)/adapters/libc_adapter.so
BENCH := $(BUILD)/sieve-bench

# libFuzzer targets (suites/fuzz/); see the fuzz rule below.
FUZZ_SECONDS ?= 600
FUZZ_TARGETS := oracle serve fixtures answers
FUZZ_BINS := $(patsubst %,$(ROOT)/build/fuzz/fuzz_%,$(FUZZ_TARGETS))
FUZZ_SRC := $(ORACLE_SRC) $(HARNESS_LIB_SRC)
PY_ADAPTER := $(ROOT)/harness/adapters/python_adapter.py

.PHONY: all deps test run examples clean install fixtures check-fixtures mutants engines-matrix bench fuzz \
  engines engines-env engines-check

all: deps $(LIB_A) $(LIB_SO) $(CLI)

deps:
	@missing=""; \
	for p in $(DEB_PACKAGES); do \
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

$(BUILD)/obj/%.o: $(ROOT)/%.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -c $< -o $@

$(ORACLE_OBJ): CFLAGS += $(ORACLE_CFLAGS)
# The suites find the fixtures through the checkout they were built from.
$(SUITE_OBJ): CFLAGS += -DSIEVE_ROOT='"$(ROOT)"'

$(LIB_A): $(ORACLE_OBJ)
	@rm -f $@
	ar rcs $@ $^

$(LIB_SO): $(ORACLE_OBJ)
	$(CC) -shared $(LDSAN) -o $@ $^ $(LDLIBS)

$(CLI): $(call obj,$(ROOT)/harness/main.c) $(HARNESS_LIB_OBJ) $(LIB_A)
	$(CC) $(LDSAN) -o $@ $^ -lcjson -lpthread -ldl $(LDLIBS)

mutants: $(MUTANT_LIBS) $(BROKEN_LIBS)

$(C_ADAPTER): $(call obj,$(ROOT)/harness/adapters/c_adapter.c) $(LIB_A)
	@mkdir -p $(dir $@)
	$(CC) -shared $(LDSAN) -o $@ $^ $(LDLIBS)

mutant_flags = -DMUTANT_$(shell echo $(1) | tr a-z- A-Z_) -DMUTANT_NAME='"$(1)"'

$(BUILD)/mutants/lib%.so: $(ROOT)/suites/mutants/port.c $(ROOT)/harness/sieve_impl.h
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -shared $(call mutant_flags,$*) -o $@ $< $(LDLIBS)

$(BUILD)/mutants-f32/lib%.so: $(ROOT)/suites/mutants/port.c $(ROOT)/harness/sieve_impl.h
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -shared -DPORT_FLOAT32 $(call mutant_flags,$*) -o $@ $< $(LDLIBS)

# Libraries that break the implementation ABI one way each (suites/mutants/broken_lib.c).
$(BUILD)/mutants/libbroken-%.so: $(ROOT)/suites/mutants/broken_lib.c $(ROOT)/harness/sieve_impl.h $(LIB_A)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -shared $(LDSAN) -DBROKEN_$(shell echo $* | tr a-z- A-Z_) -o $@ $< $(LIB_A) $(LDLIBS)

$(BENCH): $(call obj,$(ROOT)/harness/bench/bench.c) $(HARNESS_LIB_OBJ) $(LIB_A)
	$(CC) $(LDSAN) -o $@ $^ -lcjson -lpthread -ldl $(LDLIBS)

$(TESTS): $(SUITE_OBJ) $(HARNESS_LIB_OBJ) $(LIB_A)
	$(CC) $(LDSAN) -o $@ $^ -lcriterion -lcjson -lpthread -ldl $(LDLIBS)

# The suites (the fixtures among them), the oracle against generators/reference.py, then the
# harness against the oracle, the mutants and the fakes.
test: all $(TESTS) $(MUTANT_LIBS) $(BROKEN_LIBS) $(C_ADAPTER) $(FUZZ_BINS)
	sh $(ROOT)/suites/check_spec.sh
	$(TESTS) --jobs 2
	$(PYTHON) $(ROOT)/generators/differential.py $(CLI) --rows 10000 \
	  --f32-lib $(BUILD)/mutants-f32/libport-faithful.so
	$(PYTHON) -m unittest discover -s $(ROOT)/generators -p 'test_*.py'
	$(PY_SAN_ENV) SIEVE_LIB=$(LIB_SO) $(PYTHON) -m unittest discover -s $(ROOT)/oracle/python -p 'test_*.py'
	sh $(ROOT)/suites/fuzz/run.sh $(ROOT) 10 $(FUZZ_TARGETS)
	$(PYTHON) $(ROOT)/suites/mutants/check.py $(CLI) $(BUILD)/mutants $(C_ADAPTER) $(PY_ADAPTER)

# The main job: the harness puts the bundled Python adapter through every fixture and prints
# the report (the adapter wraps a plain PyTorch sampling function; see harness/adapters/).
run: all
	$(CLI) run --impl exec:"$(PYTHON) $(PY_ADAPTER)"

# Serves the example requests of harness/examples/ and prints each with its answer.
examples: all
	@$(CLI) serve < $(EXAMPLES) > $(BUILD)/run-answers.jsonl
	@awk 'NR == FNR { answer[FNR] = $$0; next } { print "request: " $$0; print "answer:  " answer[FNR]; print "" }' \
	  $(BUILD)/run-answers.jsonl $(EXAMPLES)

# Regenerates fixtures/ from generators/ (atomically) and prints what changed, per case id.
fixtures: deps
	$(PYTHON) $(ROOT)/generators/make_fixtures.py

# Regenerates into a temporary folder, fails on any byte difference, and lints fixtures/.
check-fixtures: deps
	$(PYTHON) $(ROOT)/generators/make_fixtures.py --check

# The grid of oracle/PERFORMANCE.md: fast path, spec path, the floor and the PyTorch reference,
# with the harness's own overhead; prints a table and writes build/bench.json.
bench: all $(BENCH)
	$(PYTHON) $(ROOT)/harness/bench/bench.py $(BUILD)

# libFuzzer targets (suites/fuzz/), built with clang, ASan and UBSan over the oracle and the
# harness sources. `make fuzz` runs each for FUZZ_SECONDS on a corpus seeded from the fixtures;
# `make test` runs each for a short, bounded time.

$(ROOT)/build/fuzz/fuzz_%: $(ROOT)/suites/fuzz/fuzz_%.c $(FUZZ_SRC)
	@mkdir -p $(dir $@)
	clang -std=c11 -g -O1 -ffp-contract=off -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
	  -o $@ $< $(FUZZ_SRC) -lcjson -lpthread -ldl -lm

fuzz: deps $(FUZZ_BINS)
	sh $(ROOT)/suites/fuzz/run.sh $(ROOT) $(FUZZ_SECONDS) $(FUZZ_TARGETS)

# Regenerates oracle/ENGINES.md: the profiles, their sources, and the profile-by-profile matrix.
engines-matrix: all
	$(PYTHON) $(ROOT)/harness/engines_matrix.py $(CLI) $(ROOT)/oracle/ENGINES.md \
	  $(ROOT)/harness/adapters/engines/runs

install: all
	install -d $(DESTDIR)$(PREFIX)/lib $(DESTDIR)$(PREFIX)/include $(DESTDIR)$(PREFIX)/bin
	install -m 644 $(LIB_A) $(DESTDIR)$(PREFIX)/lib/
	install -m 755 $(LIB_SO) $(DESTDIR)$(PREFIX)/lib/
	install -m 644 $(ROOT)/oracle/sieve.h $(DESTDIR)$(PREFIX)/include/
	install -m 755 $(CLI) $(DESTDIR)$(PREFIX)/bin/
	install -d $(DESTDIR)$(PREFIX)/share/sieve $(DESTDIR)$(PREFIX)/lib/pkgconfig
	install -m 644 $(ROOT)/fixtures/sieve-fixtures.json $(DESTDIR)$(PREFIX)/share/sieve/
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@VERSION@|$(VERSION)|' $(ROOT)/oracle/sieve.pc.in \
	  > $(DESTDIR)$(PREFIX)/lib/pkgconfig/sieve.pc

clean:
	rm -rf $(ROOT)/build

# Real engines as implementations under test: make engines, make engines-check
# (harness/adapters/engines/README.md).
include $(ROOT)/harness/adapters/engines/engines.mk

-include $(ORACLE_OBJ:.o=.d) $(HARNESS_LIB_OBJ:.o=.d) $(SUITE_OBJ:.o=.d)
