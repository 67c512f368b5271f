# The embedding-normalization reproducibility suite.
#   make            dependency step, then bin/repro
#   make test       every C test binary and Lua test; ends with "N passed, N failed"
#   make test-asan  the same under AddressSanitizer + UndefinedBehaviorSanitizer
#   make data       the verified corpus in data/
#   make reproduce  every study, statistic, table, figure and the paper
VERSION := 0.1.0

CC ?= cc
OPT ?= -O2
# The only machine-specific flags, explicit so results never depend on the build host
# (no -march=native, no -ffast-math).
ARCH_FLAGS ?= -mavx2 -mfma
SAN_FLAGS ?=
BUILD ?= build
BIN ?= bin
SHELL := /bin/sh

# Recursive (=) so pkg-config runs after the dependency step has installed it.
PKG_CFLAGS = $(shell pkg-config --cflags lua5.4 gsl)
PKG_LIBS = $(shell pkg-config --libs lua5.4 gsl)
WARN := -Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes
BASE_CFLAGS := -std=c11 $(OPT) $(ARCH_FLAGS) -fopenmp -D_GNU_SOURCE $(WARN) $(SAN_FLAGS)
ALL_CFLAGS = $(BASE_CFLAGS) $(PKG_CFLAGS) $(CFLAGS)
LDLIBS_ALL = $(SAN_FLAGS) -fopenmp $(PKG_LIBS) -lm

CORE_SRC := $(wildcard engine/*.c) $(wildcard stats/*.c)
LUA_SRC := $(wildcard lua/*.c)
TEST_SRC := $(wildcard tests/c/test_*.c)
CORE_OBJ := $(CORE_SRC:%.c=$(BUILD)/%.o)
LUA_OBJ := $(LUA_SRC:%.c=$(BUILD)/%.o)
TEST_BIN := $(TEST_SRC:tests/c/%.c=$(BUILD)/tests/%)
REPRO := $(BIN)/repro

.PHONY: all deps data test test-asan bench bench-stats reproduce paper clean clean-runs
.DEFAULT_GOAL := all

all: $(REPRO)

deps:
	@scripts/deps.sh

$(BUILD)/%.o: %.c | deps
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) -MMD -MP -c $< -o $@

$(BUILD)/lua/repro.o: ALL_CFLAGS += -DREPRO_VERSION='"$(VERSION)"' \
	-DREPRO_CFLAGS='"$(BASE_CFLAGS) $(CFLAGS)"'

$(BUILD)/librepro.a: $(CORE_OBJ)
	@rm -f $@
	ar rcs $@ $^

$(REPRO): $(LUA_OBJ) $(BUILD)/librepro.a
	@mkdir -p $(@D)
	$(CC) $(LUA_OBJ) $(BUILD)/librepro.a -o $@ $(LDLIBS_ALL) -Wl,-E

$(BUILD)/tests/%: tests/c/%.c $(BUILD)/librepro.a | deps
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) $< $(BUILD)/librepro.a -o $@ $(LDLIBS_ALL)

data:
	@scripts/fetch_data.sh

$(BUILD)/bench/%: tests/bench/%.c $(BUILD)/librepro.a | deps
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) $< $(BUILD)/librepro.a -o $@ $(LDLIBS_ALL)

bench-stats: $(BUILD)/bench/bench_stats
	@$(BUILD)/bench/bench_stats

test: $(REPRO) $(TEST_BIN) data
	@REPRO=$(REPRO) TEST_DIR=$(BUILD)/tests tests/run.sh

test-asan:
	@$(MAKE) --no-print-directory test BUILD=build-asan BIN=build-asan/bin OPT=-O1 \
		SAN_FLAGS="-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined"

# A benchmark, not a test: needs an idle machine; installs PyTorch (with OpenBLAS) through
# the dependency step for the comparison.
bench: $(REPRO)
	@scripts/deps.sh --torch
	@$(REPRO) tests/bench/bench_engine.lua

reproduce: $(REPRO) data
	@echo "reproduce: no studies yet (lua/experiments/ is empty): built bin/repro and" \
	      "verified the corpus; nothing else to run" >&2

clean:
	rm -rf $(BUILD) build-asan $(BIN)

-include $(CORE_OBJ:.o=.d) $(LUA_OBJ:.o=.d)
