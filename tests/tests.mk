# Tests, included by the Makefile. `make test` builds and runs every tier.
# What boots guests runs here where this machine's /dev/kvm opens, and in the
# emulated KVM host (scripts/emu-host) where it does not (tests/kvm-where);
# tests/run splits the suite itself.
EMU = $(if $(filter native:%,$(shell tests/kvm-where)),,scripts/emu-host --)
UNIT_SRC   := $(wildcard tests/unit/*.c)
UNIT_OBJ   := $(UNIT_SRC:%.c=build/host/%.o)
TEST_GUEST_SRC := $(wildcard tests/guests/*.S)
TEST_GUESTS := $(patsubst tests/guests/%.S,tests/bin/%.bin,$(TEST_GUEST_SRC))

INC_tests    := $(INC_vmm) -Itests/unit

# The Linux guest's pure parts, unit-tested on the host too.
UNIT_LX_OBJ  := build/host/guest/linux/cmdline.o
INC_tests    += -Iguest/linux

tests/bin/unit: $(UNIT_OBJ) $(UNIT_LX_OBJ) $(VMM_LIB_OBJ) $(FLAGS_STAMP)
	@mkdir -p $(dir $@)
	$(say) LD $@
	$(Q)$(CC) $(HOST_LDFLAGS) -o $@ $(UNIT_OBJ) $(UNIT_LX_OBJ) $(VMM_LIB_OBJ) $(HOST_LDLIBS)

build/host/guest/linux/%.o: guest/linux/%.c $(FLAGS_STAMP) | check-deps
	@mkdir -p $(dir $@)
	$(say) CC $<
	$(Q)$(CC) $(HOST_CFLAGS) $(INC_guest_linux) -c -o $@ $<

# Tiny hand-written guests (CPL0 only) for device and misbehaviour tests.
tests/bin/%.bin: tests/guests/%.S tests/guests/common.inc include/minivmm_abi.h
	$(call guest_bin,build/tests)

# Flat binaries for --raw: no header, entered at their first byte. They may
# use the ABI's constants (include/) and the raw test guests' macros (tests/raw/*.inc).
tests/bin/%.raw: tests/raw/%.S $(wildcard tests/raw/*.inc) include/minivmm_abi.h
	@mkdir -p build/tests $(dir $@)
	$(say) GUESTAS $<
	$(Q)$(GUEST_CC) -c -Iinclude -Itests/raw -o build/tests/$*.raw.o $<
	@# Nothing links a raw image: a relocation (an undefined symbol, an absolute address) would stay 0.
	$(Q)! readelf -r build/tests/$*.raw.o | grep -q '^Relocation section' || \
		{ echo "$<: relocations in a raw image (undefined symbol or absolute address):" >&2; \
		  readelf -rW build/tests/$*.raw.o >&2; exit 1; }
	$(Q)objcopy -O binary -j .text build/tests/$*.raw.o $@

TEST_RAW := $(patsubst tests/raw/%.S,tests/bin/%.raw,$(wildcard tests/raw/*.S))

# make test SAN=1 also builds build/plain/minivmm: the sanitizer runtime's
# calls are let through the sanitized build's filter, so what a plain build
# must never call after its filters go on is tested with a plain build
# (tests/hostile.sh's sandbox cases).
PLAIN_CFLAGS  := $(filter-out -fsanitize=% -fno-sanitize-recover=% -DMINIVMM_SANITIZE,$(HOST_CFLAGS))
PLAIN_LDFLAGS := $(filter-out -fsanitize=%,$(HOST_LDFLAGS))
PLAIN_OBJ     := $(patsubst build/host/%,build/plain/obj/%,$(VMM_OBJ))

build/plain/obj/%.o: %.c $(FLAGS_STAMP) | check-deps
	@mkdir -p $(dir $@)
	$(say) PLAINCC $<
	$(Q)$(CC) $(PLAIN_CFLAGS) $(INC_$(call room,$*)) -c -o $@ $<

build/plain/obj/vmm/report/results_file.o: $(REV_STAMP)
build/plain/obj/vmm/report/results_file.o: PLAIN_CFLAGS += -DMINIVMM_REVISION='"$(REVISION)"'

build/plain/minivmm: $(PLAIN_OBJ)
	$(say) PLAINLD $@
	$(Q)$(CC) $(PLAIN_LDFLAGS) -o $@ $(PLAIN_OBJ) $(HOST_LDLIBS)

# Its seccomp programs, by a generator built as it is (the rules differ with the sanitizers').
build/plain/sandbox-gen: build/plain/obj/vmm/machine/gen/sandbox_gen.o build/plain/obj/vmm/machine/sandbox.o
	$(say) PLAINLD $@
	$(Q)$(CC) $(PLAIN_LDFLAGS) -o $@ $^ -lseccomp

build/plain/gen/sandbox_bpf.c: build/plain/sandbox-gen
	@mkdir -p $(dir $@)
	$(say) GEN $@
	$(Q)$< $@.tmp build/plain/gen/sandbox_bpf.pfc && mv $@.tmp $@

build/plain/obj/gen/sandbox_bpf.o: build/plain/gen/sandbox_bpf.c
	@mkdir -p $(dir $@)
	$(say) PLAINCC $<
	$(Q)$(CC) $(PLAIN_CFLAGS) $(INC_vmm_machine) -c -o $@ $<

test-build: all tests/bin/unit $(TEST_GUESTS) $(TEST_RAW) build/bench/roofline \
	$(if $(filter 1,$(SAN)),build/plain/minivmm)

# --- the emulated-hardware rigs (tests/rig/run) ---------------------------------
# minivmm linked statically (Debian ships libfdt.a and libseccomp.a) for the
# rigs' initramfs.
build/static/minivmm: $(VMM_OBJ) $(FLAGS_STAMP)
	@mkdir -p $(dir $@)
	$(say) LD $@
	$(Q)$(CC) -static -o $@ $(VMM_OBJ) $(HOST_LDLIBS)

RIG_BUILD := all build/static/minivmm $(TEST_GUESTS) $(TEST_RAW) linux-guest

# make test-vmx: minivmm on a real Intel VMX + EPT KVM, in Bochs' emulation.
test-vmx: $(RIG_BUILD)
	@./tests/rig/run vmx

# make test-tdp: minivmm on a real AMD SVM + NPT KVM, in QEMU's software emulation.
test-tdp: $(RIG_BUILD)
	@./tests/rig/run tdp

# make rig RIG=vmx|tdp ARGS='--mem 64M guest/guest.bin -- hello': any minivmm
# command line inside a rig; prints its output and exits with its status.
RIG ?= vmx
rig: $(RIG_BUILD)
	@./tests/rig/run $(RIG) -- $(ARGS)

test: test-build
	@./tests/run

# make lab-check: every command of the lab (docs/lab/) and every relation its
# answers state (tests/lab-check).
lab-check: test-build
	@$(EMU) ./tests/lab-check

# make test-campaign: a campaign run for real by a throwaway single-node Slurm
# cluster and by GNU parallel (here and over ssh to a loopback sshd), merged
# and compared; killed part way and finished by running it again
# (tests/campaign/run; installs parallel, slurm-wlm, munge, openssh-server).
test-campaign: all
	@./scripts/install-deps --campaign
	@$(EMU) ./tests/campaign/run

.PHONY: test-build test-tdp test-vmx rig lab-check test-campaign

# --- fuzzing (libFuzzer, clang from Debian) ------------------------------------
#   make fuzz [FUZZ_SECONDS=60]    run every target for that long; a crash fails;
#                                  then the guest-side fuzzer (fuzz-guest, below)
FUZZ_CC      ?= clang
FUZZ_SECONDS ?= 60
FUZZ_TARGETS := hypercall translator options loader snapshot
FUZZ_FLAGS   := -g -O1 -fsanitize=address,undefined -fno-sanitize-recover=all -D_GNU_SOURCE \
                $(INC_vmm) -DMINIVMM_VERSION='"fuzz"' -DMINIVMM_SANITIZE
FUZZ_LIB_OBJ := $(patsubst build/host/%,build/fuzz/obj/%,$(VMM_LIB_OBJ))

build/fuzz/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(say) FUZZCC $<
	$(Q)$(FUZZ_CC) $(FUZZ_FLAGS) -fsanitize=fuzzer-no-link -c -o $@ $<

# The sandbox's generated programs (the host build's; a fuzz build's own flags
# make sandbox_load.c build its filters at run time instead).
build/fuzz/obj/gen/sandbox_bpf.o: $(SANDBOX_BPF).c
	@mkdir -p $(dir $@)
	$(say) FUZZCC $<
	$(Q)$(FUZZ_CC) $(FUZZ_FLAGS) -fsanitize=fuzzer-no-link -c -o $@ $<

build/fuzz/fuzz_%: tests/fuzz/fuzz_%.c $(FUZZ_LIB_OBJ)
	$(say) FUZZLD $@
	$(Q)$(FUZZ_CC) $(FUZZ_FLAGS) -fsanitize=fuzzer -o $@ $^ $(HOST_LDLIBS)

fuzz-build: $(FUZZ_TARGETS:%=build/fuzz/fuzz_%)
.SECONDARY: $(FUZZ_LIB_OBJ)

# Each target starts from its committed corpus (tests/fuzz/corpus/NAME) and
# writes what it finds to build/fuzz/corpus-NAME; crashes go to build/fuzz/.
fuzz: fuzz-build build/san/minivmm tests/bin/fuzz.raw
	@for t in $(FUZZ_TARGETS); do \
		mkdir -p build/fuzz/corpus-$$t; \
		echo "fuzz: $$t for $(FUZZ_SECONDS) s"; \
		build/fuzz/fuzz_$$t -max_total_time=$(FUZZ_SECONDS) -print_final_stats=1 \
			-artifact_prefix=build/fuzz/crash-$$t- \
			build/fuzz/corpus-$$t tests/fuzz/corpus/$$t 2>build/fuzz/$$t.log || \
			{ tail -30 build/fuzz/$$t.log; echo "fuzz: $$t FAILED"; exit 1; }; \
		grep -E 'stat::number_of_executed_units|stat::peak_rss' build/fuzz/$$t.log | \
			sed "s/^/fuzz: $$t /"; \
	done; echo "fuzz: all targets ran clean"
	@$(EMU) ./tests/fuzz/guest-fuzz --seconds $(GUEST_FUZZ_SECONDS) --minivmm build/san/minivmm

.PHONY: fuzz fuzz-build

# --- the guest-side fuzzer: tests/raw/fuzz.S on /dev/kvm, ASan+UBSan VMM -----------
#   make fuzz-guest [GUEST_FUZZ_SECONDS=60]   seeds for that long; a finding fails
# build/san/minivmm is minivmm with ASan+UBSan in a tree of its own, so that
# it never mixes with (or rebuilds) the plain objects of build/host (SAN=1
# switches build/host itself; this does not).
GUEST_FUZZ_SECONDS ?= $(FUZZ_SECONDS)
SAN_CFLAGS   := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all \
                -DMINIVMM_SANITIZE
SAN_OBJ      := $(patsubst build/host/%,build/san/obj/%,$(VMM_OBJ))

build/san/obj/%.o: %.c $(FLAGS_STAMP) | check-deps
	@mkdir -p $(dir $@)
	$(say) SANCC $<
	$(Q)$(CC) $(HOST_CFLAGS) $(SAN_CFLAGS) $(INC_$(call room,$*)) -c -o $@ $<

build/san/obj/vmm/report/results_file.o: $(REV_STAMP)
build/san/obj/vmm/report/results_file.o: HOST_CFLAGS += -DMINIVMM_REVISION='"$(REVISION)"'

build/san/minivmm: $(SAN_OBJ)
	$(say) SANLD $@
	$(Q)$(CC) $(HOST_LDFLAGS) -fsanitize=address,undefined -o $@ $(SAN_OBJ) $(HOST_LDLIBS)

# Its seccomp programs, by a generator built as it is (with the sanitizers' rules).
build/san/sandbox-gen: build/san/obj/vmm/machine/gen/sandbox_gen.o build/san/obj/vmm/machine/sandbox.o
	$(say) SANLD $@
	$(Q)$(CC) $(HOST_LDFLAGS) -fsanitize=address,undefined -o $@ $^ -lseccomp

build/san/gen/sandbox_bpf.c: build/san/sandbox-gen
	@mkdir -p $(dir $@)
	$(say) GEN $@
	$(Q)$< $@.tmp build/san/gen/sandbox_bpf.pfc && mv $@.tmp $@

build/san/obj/gen/sandbox_bpf.o: build/san/gen/sandbox_bpf.c
	@mkdir -p $(dir $@)
	$(say) SANCC $<
	$(Q)$(CC) $(HOST_CFLAGS) $(SAN_CFLAGS) $(INC_vmm_machine) -c -o $@ $<

fuzz-guest: build/san/minivmm tests/bin/fuzz.raw
	@$(EMU) ./tests/fuzz/guest-fuzz --seconds $(GUEST_FUZZ_SECONDS) --minivmm build/san/minivmm

.PHONY: fuzz-guest
