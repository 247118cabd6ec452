# The front door. CMake + CTest do the work underneath.
BUILD ?= build
MAKEFLAGS += --no-print-directory
ASAN_BUILD ?= build-asan
JOBS ?= $(shell nproc)
CMAKE_FLAGS ?= -DCMAKE_BUILD_TYPE=RelWithDebInfo
DEMO_MODEL ?= models/llama/tiny_dynamic/model.onnx
DEMO_PROMPT ?= models/llama/tiny_static/test_data_set_0/input_0.pb
DEMO_TOKENS ?= 32

.PHONY: all deps test test-fast test-asan demo demo-large bench clean install

all:
	@cmake -S . -B $(BUILD) $(CMAKE_FLAGS) >/dev/null
	@cmake --build $(BUILD) -j$(JOBS)

# make install PREFIX=DIR (default /usr/local): DIR/bin/onnx2c-caten, its data
# and CMake package under DIR/share/onnx2c-caten/, the man page.
install: all
	@cmake --install $(BUILD) $(if $(PREFIX),--prefix $(PREFIX))

# Installs missing Debian packages and onnxruntime-node (needs root for apt).
deps:
	@scripts/deps.sh

# Everything: unit tests, the ONNX node-test suite (generated C built with
# the README's speed flags, every 4th test plain -O1), then the ASan pass.
test: deps all
	@cd $(BUILD) && { ctest -j$(JOBS) --output-junit junit.xml; rc=$$?; \
	  ../scripts/node_summary.sh junit.xml; exit $$rc; }
	@$(MAKE) --no-print-directory test-asan

# The ASan pass: the compiler built with ASan+UBSan runs every test labelled
# "unit" or "sanitize": the unit tests, the hostile inputs, every node test
# and the whole-model tests, their generated C built with ASan+UBSan too
# (tests/CMakeLists.txt gives those flags in the ONNX2C_SANITIZE build).
# ASan's quarantine of freed memory at 64 MB instead of 256 (unless
# ASAN_OPTIONS is set): isl's churn otherwise faults in a fresh 256 MB in
# every large test (docs/DESIGN.md, "CI time by commit").
test-asan:
	@cmake -S . -B $(ASAN_BUILD) -DONNX2C_SANITIZE=ON -DCMAKE_BUILD_TYPE=Debug >/dev/null
	@cmake --build $(ASAN_BUILD) -j$(JOBS)
	@cd $(ASAN_BUILD) && ASAN_OPTIONS="$${ASAN_OPTIONS:-quarantine_size_mb=64}" \
	  ctest -j$(JOBS) -L 'unit|sanitize' --output-on-failure

# Compiles the tiny LLaMA (symbolic batch and seq) to C and shows it, checks
# it against onnxruntime; then prefill + DEMO_TOKENS greedy tokens from the
# KV-cache decode model (each compiled once), side by side with onnxruntime:
# tokens, top-5 logits, max difference, time per token.
demo: deps all
	@scripts/demo.sh $(BUILD)/onnx2c-caten $(DEMO_MODEL) $(DEMO_PROMPT)
	@echo
	@echo "== tiny LLaMA: onnx2c-caten vs onnxruntime (scripts/llama_demo.js)"
	@node scripts/llama_demo.js $(BUILD)/onnx2c-caten $(DEMO_TOKENS)

# The 1.1B LLaMA (TinyLlama's shape, random weights): makes it once in
# models/llama/large (models/make_llama_large.py: 4.4 GB of external data,
# ~4 minutes, ~8 GB of memory while it runs), then the same generation as
# `make demo`: each form compiled once (time and peak RSS printed), prompt +
# DEMO_TOKENS greedy tokens side by side with onnxruntime, 1 thread. Needs
# ~9 GB of memory for the two runs one after the other and ~14 GB of disk.
demo-large: deps all
	@/usr/bin/python3 models/make_llama_large.py --out models/llama/large
	@echo "== 1.1B LLaMA: onnx2c-caten vs onnxruntime (scripts/llama_demo.js)"
	@node scripts/llama_demo.js $(BUILD)/onnx2c-caten $(DEMO_TOKENS) models/llama/large/prefill.onnx models/llama/large/decode.onnx

# Performance: machine peaks, Gather/embedding, LLaMA vs onnxruntime-node
# (bench/README.md), every row (~10 minutes); `make bench BENCH=quick` only
# tiny and small; ONNX2C_BENCH_MODELS=tiny,small,base128,base1,basedec picks rows;
# `make bench BENCH=large` only the 1.1B LLaMA's rows (opt-in: a 4.4 GB model);
# TARGET=x86-64-v3 compiles and builds for AVX2 (%FMA against the AVX2 peak).
bench: deps all
	@BENCH="$(BENCH)" ONNX2C_BENCH_MODELS="$(ONNX2C_BENCH_MODELS)" TARGET="$(TARGET)" bench/run.sh $(BUILD)/onnx2c-caten

clean:
	rm -rf $(BUILD) $(ASAN_BUILD)

# libFuzzer over the compile path (fuzz/fuzz_compile.c), built with clang +
# ASan/UBSan in $(FUZZ_BUILD), seeded from the ONNX node-test models, the
# hostile models and large-attribute models (fuzz/make_seeds.sh), with a
# dictionary of ONNX field tags (fuzz/onnx.dict); inputs up to 1 MiB. New
# findings land in fuzz/corpus (not committed) and crash-* files in fuzz/.
FUZZ_BUILD ?= build-fuzz
FUZZ_SECONDS ?= 60
FUZZ_JOBS ?= 1
FUZZ_FLAGS ?= -rss_limit_mb=2048 -malloc_limit_mb=1024 -timeout=20 -max_len=1048576 \
  -dict=onnx.dict -ignore_crashes=1 -ignore_ooms=1 -ignore_timeouts=1
# Differential fuzzing against onnxruntime (fuzz/diff_fuzz.py): random
# valid graphs of seeds FUZZ_SEEDS (A:B), each compiled one of 13 ways and
# checked by `verify`; prints what is not a pass (refusals listed with their
# reasons, float-rounding suspects as "close"), keeps those models in
# fuzz/diff-out/ with the command that shows them, exits 1 on a wrong
# answer, crash or hang. About a second a seed.
FUZZ_SEEDS ?= 1:201
.PHONY: fuzz-diff
fuzz-diff: deps all
	@/usr/bin/python3 fuzz/diff_fuzz.py $(BUILD)/onnx2c-caten --seeds $(FUZZ_SEEDS) -q

# The masked-view kernels (Pad, Concat, Slice) and the copies (Pad edge,
# reflect and negative, Tile, reversed Slice, Gather of rows, Transpose)
# over every element type, short row lengths, threads and AVX-512/AVX2
# (fuzz/sweep_masks.py: 4,032 cases, exact against onnxruntime, two parts
# in parallel, ~25 minutes; SWEEP_ARGS="--kinds masks --types double" for a part).
.PHONY: fuzz-masks
fuzz-masks: deps all
	@/usr/bin/python3 fuzz/sweep_masks.py $(BUILD)/onnx2c-caten --part 0/2 $(SWEEP_ARGS) & p=$$!; \
	  /usr/bin/python3 fuzz/sweep_masks.py $(BUILD)/onnx2c-caten --part 1/2 $(SWEEP_ARGS); r=$$?; wait $$p && exit $$r

.PHONY: fuzz
fuzz:
	@CC=clang cmake -S . -B $(FUZZ_BUILD) -DCMAKE_BUILD_TYPE=Debug -DONNX2C_SANITIZE=ON -DONNX2C_NODE_TESTS=OFF \
	  -DONNX2C_FUZZ=ON -DCMAKE_C_COMPILER_LAUNCHER=$(CURDIR)/fuzz/cc_noerror.sh -DCMAKE_C_FLAGS="-fsanitize=fuzzer-no-link -Wno-unknown-warning-option" >/dev/null
	@cmake --build $(FUZZ_BUILD) -j$(JOBS) --target fuzz_compile
	@mkdir -p fuzz/corpus fuzz/seeds
	@fuzz/make_seeds.sh fuzz/seeds
	@cd fuzz && ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1 \
	  ../$(FUZZ_BUILD)/tests/fuzz_compile $(FUZZ_FLAGS) -max_total_time=$(FUZZ_SECONDS) \
	  -fork=$(FUZZ_JOBS) -print_final_stats=1 corpus seeds
