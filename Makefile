# The front door. CMake + CTest do the work underneath.
BUILD ?= build
ASAN_BUILD ?= build-asan
JOBS ?= $(shell nproc)
CMAKE_FLAGS ?= -DCMAKE_BUILD_TYPE=RelWithDebInfo
DEMO_MODEL ?= models/elementwise/model.onnx

.PHONY: all deps test test-fast test-asan demo bench clean

all:
	@cmake -S . -B $(BUILD) $(CMAKE_FLAGS) >/dev/null
	@cmake --build $(BUILD) -j$(JOBS)

# Installs missing Debian packages and onnxruntime-node (needs root for apt).
deps:
	@scripts/deps.sh

# Everything: unit tests, the ONNX node-test suite, then the unit tests and a
# slice of node tests again under AddressSanitizer + UBSan.
test: deps all
	@cd $(BUILD) && { ctest -j$(JOBS) --output-junit junit.xml; rc=$$?; \
	  ../scripts/node_summary.sh junit.xml; exit $$rc; }
	@$(MAKE) --no-print-directory test-asan

test-asan:
	@cmake -S . -B $(ASAN_BUILD) -DONNX2C_SANITIZE=ON -DCMAKE_BUILD_TYPE=Debug >/dev/null
	@cmake --build $(ASAN_BUILD) -j$(JOBS)
	@cd $(ASAN_BUILD) && ctest -j$(JOBS) -L 'unit|sanitize' --output-on-failure

demo: deps all
	@scripts/demo.sh $(BUILD)/onnx2c-caten $(DEMO_MODEL)

bench: deps all
	@echo "make bench: not implemented yet (see issue 7)"; exit 1

clean:
	rm -rf $(BUILD) $(ASAN_BUILD)
