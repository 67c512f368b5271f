# The embedding-normalization reproducibility suite.
#   make            dependency step, then bin/repro
#   make test       every C test binary and Lua test, TEST_JOBS at a time (default: the
#                   cores; tests/run.sh), a line per file; ends with "N passed, N failed"
#   make test-asan  under AddressSanitizer + UndefinedBehaviorSanitizer (what CI runs): every
#                   C test binary and the test files of tests/asan-files.txt, which together
#                   run every C line the whole suite runs (and the hostile-input tests)
#   make test-asan-all  every test file under the sanitizers
#   make asan-coverage  each test file alone on a gcov build; fails when tests/asan-files.txt
#                   no longer runs every C line the suite runs, or misses a test file
#   make test-slurm bin/repro submit --slurm on a single-node Slurm it starts (root)
#   make data       the verified corpora in data/ (scripts/corpora.lua)
#   make reproduce  every study, statistic, table, figure and the paper (REPRODUCE.md)
#   make paper      the tables, figures and PDF from the existing run records
#   make reproduce-slurm  the same as make reproduce, every study on a Slurm cluster
#   make calibrate-sequential  the group-sequential bounds for few paired differences,
#                   each checked by simulation (stats/sequential_calibration.txt)
VERSION := 0.1.0

CC ?= cc
OPT ?= -O2
SAN_FLAGS ?=
BUILD ?= build
BIN ?= bin
SHELL := /bin/sh
# test files run at a time by make test (tests/run.sh); empty: one per core
TEST_JOBS ?=
# test files make test leaves out (tests/run.sh names them); empty: none
TEST_SKIP ?=
# seconds per test file, to start the longest first in a build without test-times
# (tests/run.sh); empty: the list in tests/run.sh
TEST_TIMES ?=

# Recursive (=) so pkg-config runs after the dependency step has installed it.
PKG_CFLAGS = $(shell pkg-config --cflags lua5.4 gsl)
PKG_LIBS = $(shell pkg-config --libs lua5.4 gsl)
WARN := -Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes
# No -march=native, no -ffast-math, no FMA contraction: build flags never change a result.
# The CPU paths of engine/isa.h get their instruction sets per file, below; which one
# runs is chosen at run time (REPRO_ISA).
BASE_CFLAGS := -std=c11 $(OPT) -ffp-contract=off -fopenmp -D_GNU_SOURCE $(WARN) $(SAN_FLAGS)
ALL_CFLAGS = $(BASE_CFLAGS) $(PKG_CFLAGS) $(CFLAGS)
LDLIBS_ALL = $(SAN_FLAGS) -fopenmp $(PKG_LIBS) -lm

CORE_SRC := $(wildcard engine/*.c) $(wildcard stats/*.c)
LUA_SRC := $(wildcard lua/*.c)
TEST_SRC := $(wildcard tests/c/test_*.c)
CORE_OBJ := $(CORE_SRC:%.c=$(BUILD)/%.o)
LUA_OBJ := $(LUA_SRC:%.c=$(BUILD)/%.o)
TEST_BIN := $(TEST_SRC:tests/c/%.c=$(BUILD)/tests/%)
REPRO := $(BIN)/repro

# Builds use every core unless the command line says -jN: the objects of bin/repro, the
# test binaries and the sanitizer build compile side by side (a serial build was 90 s of
# make test-asan's time in CI).  Only at the top level (a sub-make shares its parent's
# jobs) and never with clean, whose removal must not race a build in the same command.
ifeq ($(MAKELEVEL)$(filter -j%,$(MAKEFLAGS))$(filter clean clean-runs,$(MAKECMDGOALS)),0)
MAKEFLAGS += -j$(shell nproc 2>/dev/null || echo 2)
endif

.PHONY: FORCE cost-table calibrate-sequential all deps data test test-bins test-asan test-asan-all asan-coverage asan-coverage-choose test-slurm bench bench-profile bench-gemm bench-stats reproduce reproduce-slurm paper verify clean clean-runs
.DEFAULT_GOAL := all

all: $(REPRO)

deps:
	@scripts/deps.sh

# The flags of the last compile in $(BUILD): rewritten only when they change (OPT,
# SAN_FLAGS or CFLAGS on the command line), and every object and binary depends on it, so
# a change of flags rebuilds them instead of linking objects made with the old ones.
FLAGS_STAMP := $(BUILD)/cflags.txt
$(FLAGS_STAMP): FORCE
	@mkdir -p $(@D)
	@printf '%s\n' '$(BASE_CFLAGS) $(CFLAGS)' | cmp -s - $@ || \
	    printf '%s\n' '$(BASE_CFLAGS) $(CFLAGS)' > $@
FORCE:

$(BUILD)/%.o: %.c $(FLAGS_STAMP) | deps
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) -MMD -MP -c $< -o $@

ifeq ($(shell uname -m),x86_64)
$(BUILD)/engine/kern_avx512.o: ALL_CFLAGS += -mavx512f -mfma
$(BUILD)/engine/kern_avx2.o: ALL_CFLAGS += -mavx2 -mfma
endif

$(BUILD)/lua/repro.o: ALL_CFLAGS += -DREPRO_VERSION='"$(VERSION)"' \
	-DREPRO_CFLAGS='"$(BASE_CFLAGS) $(CFLAGS)"'

$(BUILD)/librepro.a: $(CORE_OBJ)
	@rm -f $@
	ar rcs $@ $^

$(REPRO): $(LUA_OBJ) $(BUILD)/librepro.a $(FLAGS_STAMP)
	@mkdir -p $(@D)
	$(CC) $(LUA_OBJ) $(BUILD)/librepro.a -o $@ $(LDLIBS_ALL) -Wl,-E

$(BUILD)/tests/%: tests/c/%.c $(BUILD)/librepro.a $(FLAGS_STAMP) | deps
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) $< $(BUILD)/librepro.a -o $@ $(LDLIBS_ALL)

# Tiny Shakespeare (scripts/fetch_data.sh), then every other corpus of scripts/corpora.lua
# extracted from its Debian package, checked against its pinned SHA-256, with the
# baselines in data/corpora.json.
data: $(REPRO)
	@scripts/fetch_data.sh
	@$(REPRO) corpora --build >/dev/null

$(BUILD)/bench/%: tests/bench/%.c $(BUILD)/librepro.a $(FLAGS_STAMP) | deps
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) $< $(BUILD)/librepro.a -o $@ $(LDLIBS_ALL)

bench-stats: $(BUILD)/bench/bench_stats
	@$(BUILD)/bench/bench_stats

# The GEMM shapes of the default model, its attention and its norms, on one thread in CPU
# time (tests/bench/bench_gemm.c; ARGS="threads=2 C=256 path=avx2 attn ...")
bench-gemm: $(BUILD)/bench/bench_gemm
	@$(BUILD)/bench/bench_gemm $(ARGS)

$(BUILD)/tests/tiny_train: tests/cross/tiny_train.c $(BUILD)/librepro.a $(FLAGS_STAMP) | deps
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) -Iengine $< $(BUILD)/librepro.a -o $@ $(LDLIBS_ALL)

test: $(REPRO) $(TEST_BIN) $(BUILD)/tests/tiny_train data
	@scripts/deps.sh --test
	@REPRO=$(REPRO) TEST_DIR=$(BUILD)/tests TEST_JOBS=$(TEST_JOBS) TEST_SKIP="$(TEST_SKIP)" \
	    TEST_TIMES=$(TEST_TIMES) tests/run.sh

# The sanitizers only see our C (engine/, stats/, lua/*.c), and most test files run the same
# C again and again (tiny models, bootstraps, task scoring), so make test-asan runs only the
# files tests/asan-files.txt keeps: every C test binary, the tests that feed the C hostile
# input, and a weighted set cover of the rest whose union of executed C lines is the whole
# suite's (per-file gcov coverage: make asan-coverage; tests/sh/test_asan_list.sh fails
# when a test file is not in the list, and until it is, make test-asan runs it).
ASAN_FLAGS := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
# -O2 as the real build: the checks are the same (the sanitizers instrument every access
# the code keeps), and the engine's kernels run at twice the speed (test_tasks.lua under
# ASan: 213 s of user CPU at -O1, 92 s at -O2).
ASAN_OPT := -O2
ASAN_LIST := tests/asan-files.txt
ASAN_SKIP = $(shell awk '!/^\#/ && $$3 == "skip" { print $$1 }' $(ASAN_LIST))
test-asan:
	@n=$$(ls tests/c/test_*.c tests/lua/test_*.lua tests/sh/test_*.sh | wc -l); \
	k=$$(echo $(ASAN_SKIP) | wc -w); \
	echo "test-asan: $$((n - k)) of $$n test files under ASan+UBSan: every C test binary and the" \
	    "files of $(ASAN_LIST), which run every C line the whole suite runs (make asan-coverage" \
	    "checks it); make test-asan-all runs all $$n"
	@$(MAKE) --no-print-directory test BUILD=build-asan BIN=build-asan/bin OPT=$(ASAN_OPT) \
		SAN_FLAGS="$(ASAN_FLAGS)" TEST_SKIP="$(ASAN_SKIP)" TEST_TIMES=$(ASAN_LIST)

test-asan-all:
	@$(MAKE) --no-print-directory test BUILD=build-asan BIN=build-asan/bin OPT=$(ASAN_OPT) \
		SAN_FLAGS="$(ASAN_FLAGS)" TEST_TIMES=$(ASAN_LIST)

# bin/repro and every test binary of one build (BUILD=...)
test-bins: $(REPRO) $(TEST_BIN) $(BUILD)/tests/tiny_train

# make asan-coverage: a gcov build (build-cov/, at -O1, where gcov's line counts stay close to
# the source; which lines a file runs does not depend on the level), every test file run
# alone against it, TEST_JOBS at a time, each with its own .gcda (scripts/asan_coverage.sh),
# then the check of tests/asan-files.txt against the lines each file ran (build-cov/coverage/).
# make asan-coverage-choose rewrites the list from that coverage (a new set cover).
COV_MAKE := $(MAKE) --no-print-directory BUILD=build-cov BIN=build-cov/bin OPT=-O1 \
	SAN_FLAGS="--coverage -fprofile-update=single"
asan-coverage:
	@$(COV_MAKE) test-bins data
	@rm -rf build-cov/coverage
	@REPRO=build-cov/bin/repro TEST_DIR=build-cov/tests JOBS=$(or $(TEST_JOBS),$(shell nproc 2>/dev/null || echo 2)) \
	    scripts/asan_coverage.sh run build-cov/coverage
	@REPRO=build-cov/bin/repro TEST_DIR=build-cov/tests scripts/asan_coverage.sh check build-cov/coverage $(ASAN_LIST)

asan-coverage-choose:
	@REPRO=build-cov/bin/repro TEST_DIR=build-cov/tests scripts/asan_coverage.sh choose build-cov/coverage \
	    $(ASAN_LIST) > $(ASAN_LIST).tmp && mv $(ASAN_LIST).tmp $(ASAN_LIST) && \
	    echo "asan-coverage-choose: $(ASAN_LIST) rewritten from build-cov/coverage" >&2 || \
	    { rm -f $(ASAN_LIST).tmp; exit 1; }

# bin/repro submit --slurm on a real single-node Slurm that the test starts and stops
# itself (munged, slurmctld, slurmd on localhost; needs root): tests/sh/test_slurm.sh.
test-slurm: $(REPRO) data
	@scripts/deps.sh --slurm
	@REPRO=$(REPRO) REPRO_TEST_SLURM=1 sh tests/sh/test_slurm.sh

# A benchmark, not a test: needs an idle machine; installs PyTorch (with OpenBLAS) through
# the dependency step for the comparison.
#   make bench AB=<commit> [ROUNDS=5] [STEPS=20]  this tree against that commit's build,
#                      interleaved rounds, each beside a fresh FMA peak, medians and ranges
#                      (tests/bench/bench_ab.lua; the commit is built in build/ab/)
AB ?=
ROUNDS ?= 5
STEPS ?= 20
ifeq ($(AB),)
bench: $(REPRO)
	@scripts/deps.sh --torch
	@REPRO=$(REPRO) $(REPRO) script tests/bench/bench_engine.lua
else
bench: $(REPRO) data
	@REPRO=$(abspath $(REPRO)) $(REPRO) script tests/bench/bench_ab.lua $(AB) $(ROUNDS) $(STEPS)
endif

# The step profile (a benchmark too, on an idle machine): the time of each kind of work per
# training step at 1 and 2 threads, the products' GFLOP/s and % of peak, and the bounds it
# implies, beside bench_gemm's linear shapes alone at the same thread counts
# (tests/bench/profile.lua; engine/prof.h).
bench-profile: $(REPRO) data $(BUILD)/bench/bench_gemm
	@$(REPRO) script tests/bench/profile.lua steps=$(STEPS) gemm=$(BUILD)/bench/bench_gemm

# Studies and the paper.
#   make reproduce     every study of lua/experiments/ (finished runs reused), then make paper
#   make paper         tables, numbers, figures and the two PDFs (main.pdf, supplement.pdf)
#                      from the existing records only; fails when an assertion of the main
#                      text contradicts its summary, names an analysis that does not exist,
#                      or a finding sentence asserts nothing (bin/repro ledger), when two
#                      manifest entries of different parameters give the same bytes, or
#                      when the prose lint (tests/report/prose_lint.lua, on each PDF's
#                      text) finds a fault
#   QUICK=1            every study at a tiny budget (QUICK_SET) into $(BUILD)/quick/: its own
#                      records, tables, figures and PDF; the real results are never touched.
#                      make reproduce QUICK=1 then checks the PDFs against the quick summaries;
#                      the main text's assertions its records contradict are listed on
#                      stderr (bin/repro report --lenient-assertions), not failed on.
#   JOBS=N             worker processes per study (default: the study file's `jobs`; with
#                      QUICK=1, one per core: its tiny models keep a second thread idle,
#                      and a record's bytes never depend on the threads)
#   STUDY_JOBS=N       studies at once, each once the studies it needs have ended (default
#                      1; with QUICK=1, 2: a core idles while a tiny study is analysed);
#                      scripts/reproduce_studies.sh
#   UPDATE=1           write the summaries that would change (bin/repro run --update); without
#                      it make reproduce fails, listing them with what changes and why
#                      (scripts/reproduce_studies.sh).  QUICK=1 always writes its own.
# The studies run in one recipe, in the order `bin/repro studies` gives (each after the
# studies it reads or declares in `depends`; among ready ones by name), or STUDY_JOBS at
# once, each after those; make's -j does not change it.  Paths are relative: the generated files name them.
QUICK ?=
JOBS ?=
UPDATE ?=
REPRO_UPDATE := $(if $(filter 1,$(QUICK)),1,$(UPDATE))
QUICK_MODEL := n_layer=1,d_model=32,n_head=2,context=32,batch=4
QUICK_SET := $(QUICK_MODEL),iters=20,warmup=2,diag_every=5,diag_windows=4
STUDY_JOBS ?=
ifeq ($(QUICK),1)
ifeq ($(JOBS),)
JOBS := $(shell nproc 2>/dev/null || echo 2)
endif
ifeq ($(STUDY_JOBS),)
STUDY_JOBS := 2
endif
STUDY_TIMES := $(BUILD)/quick/study-times
STUDY_TIMES_DEFAULT := scripts/quick-study-times.txt
EXPERIMENTS := $(BUILD)/quick/experiments
PAPER_DIR := $(BUILD)/quick/paper
PLOT_DATA := $(BUILD)/quick/plots/data
LATEX_DIR := $(BUILD)/quick/latex
RUN_FLAGS := --out-root $(EXPERIMENTS) --set $(QUICK_SET)
# the tiny runs' verdicts differ from the committed ones: the main text's assertions they
# contradict are listed, not failed on
REPORT_FLAGS := --lenient-assertions
# OpenMP's threads sleep between parallel regions instead of spinning (bin/repro's own
# default is a short spin): a tiny model's regions last microseconds and two studies share
# the cores (lr_sweep at QUICK's size: 56 CPU s with the spin, 43 without).  Never a
# result's bit: only which thread waits how.  A caller's OMP_WAIT_POLICY is kept.
OMP_WAIT_POLICY ?= PASSIVE
export OMP_WAIT_POLICY
else
ifeq ($(STUDY_JOBS),)
STUDY_JOBS := 1
endif
STUDY_TIMES := $(BUILD)/study-times
STUDY_TIMES_DEFAULT :=
EXPERIMENTS := experiments
PAPER_DIR := paper
PLOT_DATA := plots/data
LATEX_DIR := $(BUILD)/latex
RUN_FLAGS :=
REPORT_FLAGS :=
endif
# The documents make paper builds from PAPER_DIR: the supplement first (the main text
# cites its sections through its .aux, found in LATEX_DIR: TEXINPUTS), then the main text.
PAPER_DOCS := supplement main
# Fixed dates (and none in the PDF, see paper/main.tex) keep the PDF byte-identical.
LATEXMK := SOURCE_DATE_EPOCH=0 FORCE_SOURCE_DATE=1 latexmk -pdf -interaction=nonstopmode \
	-halt-on-error -quiet

reproduce: $(REPRO) data
	@studies=$$($(REPRO) studies --order --out-root $(EXPERIMENTS)) || exit 1; \
	files=""; for s in $$studies; do files="$$files lua/experiments/$$s.lua"; done; \
	$(REPRO) cost $$files $(if $(JOBS),--jobs $(JOBS)) $(RUN_FLAGS) >&2 || exit 1; \
	deps=$$($(REPRO) studies --deps --out-root $(EXPERIMENTS)) || exit 1; \
	REPRO=$(REPRO) UPDATE=$(REPRO_UPDATE) STUDY_JOBS=$(STUDY_JOBS) STUDY_DEPS="$$deps" \
	    STUDY_TIMES=$(STUDY_TIMES) STUDY_TIMES_DEFAULT=$(STUDY_TIMES_DEFAULT) \
	    scripts/reproduce_studies.sh $$studies -- \
	    $(if $(JOBS),--jobs $(JOBS)) $(RUN_FLAGS) || exit 1
	@$(MAKE) --no-print-directory verify QUICK=$(QUICK) >&2
	@$(MAKE) --no-print-directory paper QUICK=$(QUICK)
ifeq ($(QUICK),1)
	@$(REPRO) script tests/report/check_pdf.lua $(EXPERIMENTS) $(PAPER_DIR)
endif

# REPRODUCE.md's predicted study table: bin/repro cost --markdown over every study in
# make reproduce's order (calibrating each model shape once per machine and build; best on
# an idle machine), spliced between its markers by scripts/cost_table.lua.
cost-table: $(REPRO) data
	@studies=$$($(REPRO) studies --order) || exit 1; \
	files=""; for s in $$studies; do files="$$files lua/experiments/$$s.lua"; done; \
	$(REPRO) cost $$files --markdown > $(BUILD)/cost-table.md && \
	$(REPRO) script scripts/cost_table.lua $(BUILD)/cost-table.md && \
	echo "cost-table: REPRODUCE.md's predicted study table updated" >&2

# Every record's SHA-256 against its manifest (bin/repro verify): the list of records that
# are not verified, then the counts; fails on a mismatch.  Then every summary recomputed
# from its records (scripts/check_summaries.lua), which builds skip.
verify: $(REPRO) data
	@$(REPRO) verify $(EXPERIMENTS) > $(BUILD)/verify.txt || { cat $(BUILD)/verify.txt; exit 1; }
	@tail -n 1 $(BUILD)/verify.txt
	@$(REPRO) script scripts/check_summaries.lua $(EXPERIMENTS)

# The t and signed-rank bounds of a grid of group-sequential designs (one constant calibrated
# on 100,000 simulated null studies, and alpha spending on each test's exact null), and every
# design's type I error (or family-wise error) on 100,000 others, normal and t3
# (scripts/calibrate_sequential.lua); the same bytes on every run (one thread, fixed seeds).
# Commit stats/sequential_calibration.txt after a change to stats/sequential*.c.
calibrate-sequential: $(REPRO)
	@$(REPRO) script scripts/calibrate_sequential.lua stats/sequential_calibration.txt

# make reproduce on a Slurm cluster, from a login node (REPRODUCE.md): every study as a job
# array, each submitted once the studies it needs are analysed (scripts/reproduce_slurm.sh),
# then make paper.  SLURM_FLAGS go to every `bin/repro submit --slurm`, e.g.
# SLURM_FLAGS="--partition cpu --time 2:00:00 --max-parallel 64".  QUICK=1 as above.
SLURM_FLAGS ?=
reproduce-slurm: $(REPRO) data
	@REPRO=$(REPRO) scripts/reproduce_slurm.sh $(RUN_FLAGS) $(SLURM_FLAGS)
	@$(MAKE) --no-print-directory paper QUICK=$(QUICK)
ifeq ($(QUICK),1)
	@$(REPRO) script tests/report/check_pdf.lua $(EXPERIMENTS) $(PAPER_DIR)
endif

# The report checks each summary's inputs, the corpora among them, hence data.
paper: deps $(REPRO) data
	@$(REPRO) report --experiments $(EXPERIMENTS) --paper $(PAPER_DIR) --plots-data $(PLOT_DATA) \
	    $(REPORT_FLAGS)
ifneq ($(PAPER_DIR),paper)
	@for d in $(PAPER_DOCS) printsize; do \
	    cmp -s paper/$$d.tex $(PAPER_DIR)/$$d.tex || cp paper/$$d.tex $(PAPER_DIR)/$$d.tex; done
endif
	@mkdir -p $(LATEX_DIR)
	@for d in $(PAPER_DOCS); do \
	  ( cd $(PAPER_DIR) && TEXINPUTS=$(abspath $(LATEX_DIR)): $(LATEXMK) -outdir=$(abspath $(LATEX_DIR)) $$d.tex >/dev/null ) || \
	    { tail -n 40 $(LATEX_DIR)/$$d.log >&2; \
	      echo "paper: pdflatex failed on $$d.tex (log: $(LATEX_DIR)/$$d.log)" >&2; exit 1; }; \
	  if grep -nE 'undefined|Overfull \\hbox' $(LATEX_DIR)/$$d.log >&2; then \
	    echo "paper: undefined references or overfull lines (above; log: $(LATEX_DIR)/$$d.log)" >&2; \
	    exit 1; fi; \
	  $(REPRO) script tests/report/lint_pdf.lua $(LATEX_DIR)/$$d.pdf || exit 1; \
	  cmp -s $(LATEX_DIR)/$$d.pdf $(PAPER_DIR)/$$d.pdf || cp $(LATEX_DIR)/$$d.pdf $(PAPER_DIR)/$$d.pdf; \
	done
ifeq ($(PAPER_DIR),paper)
	@$(REPRO) script scripts/readme_results.lua $(PAPER_DIR)
endif
	@echo "paper: $(PAPER_DIR)/main.pdf $(PAPER_DIR)/supplement.pdf" >&2

# Never deletes run records: the QUICK records in $(BUILD)/quick/experiments stay too.
clean:
	rm -rf build-asan build-cov $(BIN) $(BUILD)/quick/paper $(BUILD)/quick/plots $(BUILD)/quick/latex
	@if [ -d $(BUILD) ]; then find $(BUILD) -mindepth 1 -maxdepth 1 ! -name quick ! -name provenance -exec rm -rf {} +; fi

clean-runs:
	@echo "clean-runs: deleting every run record and study summary:" \
	    "$(wildcard experiments/*/) $(BUILD)/quick/experiments" \
	    "(the committed ones come back with: git checkout -- experiments)" >&2
	rm -rf $(wildcard experiments/*/) $(BUILD)/quick/experiments

-include $(CORE_OBJ:.o=.d) $(LUA_OBJ:.o=.d)
