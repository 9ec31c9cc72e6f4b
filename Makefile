# minivmm: one Makefile for the VMM, the guest image, tests and lint.
#   make            build ./minivmm and guest/guest.bin
#   make test       build and run every test (SAN=1: VMM with ASan+UBSan)
#   make run        the default experiment (installs missing Debian packages)
#   make lint       check formatting with clang-format
#   make install    PREFIX=/usr/local DESTDIR=
#   STATIC=0        link ./minivmm as Debian links programs (default: statically)
.DEFAULT_GOAL := all
VERSION    := 0.1.0
PREFIX     ?= /usr/local
BINDIR     ?= $(PREFIX)/bin
LIBEXECDIR ?= $(PREFIX)/lib/minivmm
MANDIR     ?= $(PREFIX)/share/man
WERROR     ?= 1
SAN        ?= 0

CC         ?= cc
WARN       := -Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes \
              -Wno-unused-parameter
ifeq ($(WERROR),1)
WARN       += -Werror
endif

# --- host (the VMM) ---------------------------------------------------------
HOST_CFLAGS  := -std=gnu11 -O2 -g $(WARN) -D_GNU_SOURCE -MMD -MP \
                -DMINIVMM_VERSION='"$(VERSION)"'
# Each room sees only the headers it may use (docs/architecture.md): arrows point
# one way, vmm (main) -> vmm/experiment -> vmm/run -> vmm/cli -> vmm/report ->
# vmm/snapshot -> vmm/measure -> vmm/machine -> devices -> mm -> include,
# vmm/report -> vmm/boot -> vmm/machine, and
# guest -> firmware -> include. Inside mm/: paging -> ram -> file -> backing ->
# the base (mm/ itself), numa -> backing, roofline -> the base; the rooms above
# mm/ see all of it (INC_mm).
# tests/static/layering checks the same rules on the sources, and
# tests/static/calls on the objects: who calls whom.
INC_mm_base       := -Iinclude -Imm
INC_mm_backing    := $(INC_mm_base) -Imm/backing
INC_mm_roofline   := $(INC_mm_base) -Imm/roofline
INC_mm_numa       := $(INC_mm_backing) -Imm/numa
INC_mm_file       := $(INC_mm_backing) -Imm/file
INC_mm_ram        := $(INC_mm_file) -Imm/ram
INC_mm_paging     := $(INC_mm_ram) -Imm/paging
INC_mm            := $(INC_mm_paging) -Imm/numa -Imm/roofline
INC_devices       := $(INC_mm) -Idevices
INC_vmm_machine   := $(INC_devices) -Ivmm/machine
INC_vmm_boot      := $(INC_vmm_machine) -Ivmm/boot
INC_vmm_measure   := $(INC_vmm_machine) -Ivmm/measure
INC_vmm_snapshot  := $(INC_vmm_measure) -Ivmm/snapshot
INC_vmm_report    := $(INC_vmm_snapshot) -Ivmm/boot -Ivmm/report
INC_vmm_cli       := $(INC_vmm_report) -Ivmm/cli
INC_vmm_run       := $(INC_vmm_cli) -Ivmm/run
INC_vmm_experiment := $(INC_vmm_run) -Ivmm/experiment
INC_vmm           := $(INC_vmm_experiment) -Ivmm
INC_firmware      := -Iinclude -Ifirmware
INC_guest         := $(INC_firmware) -Iguest
INC_guest_linux   := -Iinclude -Iguest/linux
# A source file's room: its top folder; vmm_SUB and mm_SUB for the rooms inside
# vmm/ and mm/; mm_base for the files at mm/'s top.
room = $(call room_of,$(subst /, ,$(1)))
room_of = $(if $(filter vmm mm,$(word 1,$(1))),$(if $(word 3,$(1)),$(word 1,$(1))_$(word 2,$(1)),$(if $(filter mm,$(word 1,$(1))),mm_base,vmm)),$(word 1,$(1)))
INC_scripts       := $(INC_mm)
HOST_LDLIBS  := -lfdt -lseccomp -lpthread -lm
# ./minivmm is linked statically: no dynamic loader (four libraries, their
# relocations, ~45 system calls and ~50 page faults) runs between exec and the
# guest's first instruction (bench/startup). Debian ships libfdt.a, libseccomp.a
# and libc.a, and minivmm uses nothing of glibc that needs shared objects at run
# time (NSS, iconv, dlopen). The sanitizers' runtime is shared: SAN=1 links dynamically.
STATIC       ?= $(if $(filter 1,$(SAN)),0,1)
VMM_LDFLAGS  := $(if $(filter 1,$(STATIC)),-static)
ifeq ($(SAN),1)
HOST_CFLAGS  += -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all \
                -DMINIVMM_SANITIZE
HOST_LDFLAGS += -fsanitize=address,undefined
endif

# --- guest (freestanding, linked at MVM_LOAD_GPA) ---------------------------
GUEST_CC     := gcc
GUEST_CFLAGS := -std=gnu11 -O2 -g $(WARN) -MMD -MP -ffreestanding -nostdlib -fno-pic \
                -fno-pie -mno-red-zone -mno-sse -mno-mmx -mno-sse2 -mno-80387 \
                -fno-stack-protector -fcf-protection=none -fno-asynchronous-unwind-tables \
                -fno-builtin -mcmodel=small
GUEST_LDFLAGS := -nostdlib -static -no-pie -Wl,--build-id=none -Wl,-T,firmware/firmware.lds \
                -Wl,--no-dynamic-linker -Wl,-z,noexecstack -Wl,-z,norelro \
                -Wl,--no-warn-rwx-segments
LIBFDT_A     := $(firstword $(wildcard /usr/lib/x86_64-linux-gnu/libfdt.a /usr/lib/libfdt.a))

# Objects depend on the flags they were built with: switching SAN=1 on or off
# rebuilds instead of linking sanitized and plain objects together.
FLAGS_STAMP  := build/host/flags
FLAGS_NOW    := $(HOST_CFLAGS) $(HOST_LDFLAGS) $(VMM_LDFLAGS)
ifneq ($(file <$(FLAGS_STAMP)),$(FLAGS_NOW))
$(shell mkdir -p build/host)
$(file >$(FLAGS_STAMP),$(FLAGS_NOW))
endif

# The source revision goes into every results file (vmm/report/results_file.c);
# only that object is rebuilt when it changes.
REVISION     := $(shell git describe --always --dirty --abbrev=12 2>/dev/null || echo unknown)
REV_STAMP    := build/host/revision
ifneq ($(file <$(REV_STAMP)),$(REVISION))
$(shell mkdir -p build/host)
$(file >$(REV_STAMP),$(REVISION))
endif
build/host/vmm/report/results_file.o: $(REV_STAMP)
build/host/vmm/report/results_file.o: HOST_CFLAGS += -DMINIVMM_REVISION='"$(REVISION)"'

VMM_SRC      := $(wildcard vmm/*.c vmm/*/*.c mm/*.c mm/*/*.c devices/*.c)
VMM_OBJ      := $(VMM_SRC:%.c=build/host/%.o)
# The sandbox's seccomp programs, built at compile time: sandbox-gen runs the rules
# (vmm/machine/sandbox.c) through libseccomp with placeholders where run-time
# values go; sandbox_load.c patches them in (docs/guide.md, "Sandbox").
SANDBOX_GEN  := build/host/sandbox-gen
SANDBOX_BPF  := build/host/gen/sandbox_bpf
VMM_OBJ      += $(SANDBOX_BPF).o
VMM_LIB_OBJ  := $(filter-out build/host/vmm/main.o,$(VMM_OBJ))
FW_SRC       := $(wildcard firmware/*.c firmware/*.S guest/*.c)
FW_OBJ       := $(patsubst %,build/guest/%.o,$(basename $(FW_SRC)))

all: check-deps minivmm guest/guest.bin scripts/reservoir

# A readable message instead of a wall of compiler errors.
check-deps:
	@missing=""; \
	[ -f /usr/include/libfdt.h ] && [ -n "$(LIBFDT_A)" ] || missing="$$missing libfdt-dev"; \
	[ -f /usr/include/seccomp.h ] && { [ "$(STATIC)" != 1 ] || \
		[ -f /usr/lib/x86_64-linux-gnu/libseccomp.a ]; } || missing="$$missing libseccomp-dev"; \
	[ "$(STATIC)" != 1 ] || [ -f /usr/lib/x86_64-linux-gnu/libc.a ] || missing="$$missing libc6-dev"; \
	[ -f /usr/include/linux/kvm.h ] || missing="$$missing linux-libc-dev"; \
	if [ -n "$$missing" ]; then \
		echo "minivmm: missing Debian packages:$$missing" >&2; \
		echo "  install them with: apt-get install$$missing   (or run: make deps)" >&2; \
		exit 1; \
	fi

deps:
	./scripts/install-deps

# V=1 shows the full commands.
ifeq ($(V),1)
Q :=
say = @true
else
Q := @
say = @printf '  %-7s %s\n'
endif

minivmm: $(VMM_OBJ) $(FLAGS_STAMP)
	$(say) LD $@
	$(Q)$(CC) $(HOST_LDFLAGS) $(VMM_LDFLAGS) -o $@ $(VMM_OBJ) $(HOST_LDLIBS)

$(SANDBOX_GEN): build/host/vmm/machine/gen/sandbox_gen.o build/host/vmm/machine/sandbox.o $(FLAGS_STAMP)
	$(say) LD $@
	$(Q)$(CC) $(HOST_LDFLAGS) -o $@ $(filter %.o,$^) -lseccomp

$(SANDBOX_BPF).c: $(SANDBOX_GEN)
	@mkdir -p $(dir $@)
	$(say) GEN $@
	$(Q)$(SANDBOX_GEN) $@.tmp $(SANDBOX_BPF).pfc && mv $@.tmp $@

$(SANDBOX_BPF).o: $(SANDBOX_BPF).c
	$(say) CC $<
	$(Q)$(CC) $(HOST_CFLAGS) $(INC_vmm_machine) -c -o $@ $<

# The reservoir tool: mm's lease and scrub code, no KVM (scripts/reservoir.c).
MM_OBJ       := $(filter build/host/mm/%,$(VMM_OBJ))
scripts/reservoir: build/host/scripts/reservoir.o $(MM_OBJ) $(FLAGS_STAMP)
	$(say) LD $@
	$(Q)$(CC) $(HOST_LDFLAGS) -o $@ build/host/scripts/reservoir.o $(MM_OBJ) -lpthread

build/host/%.o: %.c $(FLAGS_STAMP) | check-deps
	@mkdir -p $(dir $@)
	$(say) CC $<
	$(Q)$(CC) $(HOST_CFLAGS) $(INC_$(call room,$*)) -c -o $@ $<

build/guest/%.o: %.c | check-deps
	@mkdir -p $(dir $@)
	$(say) GUESTCC $<
	$(Q)$(GUEST_CC) $(GUEST_CFLAGS) $(INC_$(firstword $(subst /, ,$*))) -c -o $@ $<

build/guest/%.o: %.S | check-deps
	@mkdir -p $(dir $@)
	$(say) GUESTAS $<
	$(Q)$(GUEST_CC) $(GUEST_CFLAGS) $(INC_$(firstword $(subst /, ,$*))) -c -o $@ $<

# libfdt.a is Debian's, built for user space: it has no floating point, and it
# runs only at boot with interrupts off, so its red zone and stack protector
# (canary at %fs:0x28, set up in cpu.c) are safe in the firmware.
build/guest/guest.elf: $(FW_OBJ) firmware/firmware.lds
	$(say) GUESTLD $@
	$(Q)$(GUEST_CC) $(GUEST_LDFLAGS) -o $@ $(FW_OBJ) $(LIBFDT_A) -lgcc

guest/guest.bin: build/guest/guest.elf
	$(say) OBJCOPY $@
	$(Q)objcopy -O binary $< $@

# Benchmark helpers: plain host programs; populate-ref uses the ABI's slicing and mm's KVM constants.
build/bench/%: bench/%.c $(FLAGS_STAMP)
	@mkdir -p $(dir $@)
	$(say) CC $<
	$(Q)$(CC) $(HOST_CFLAGS) $(INC_mm) -o $@ $< -lpthread

# The floor linked statically too (bench/startup): no dynamic loader before main.
build/bench/kvm-floor-static: bench/kvm-floor.c $(FLAGS_STAMP)
	@mkdir -p $(dir $@)
	$(say) CC $<
	$(Q)$(CC) $(HOST_CFLAGS) -static -o $@ $<

# --- the Linux guest (guest/linux/: make linux-guest) ------------------------
# Static Linux programs for the initramfs: /init, hello, and bench/sweep-host
# itself (the same binary the host runs: sweep and flat). The kernel is
# Debian's, the package the rigs boot (scripts/debian-kernel), from RIG_CACHE.
#   make linux-guest   build/linux/vmlinuz and build/linux/initrd.cpio.gz
LX          := build/linux
LX_CFLAGS   := -std=gnu11 -O2 -g $(WARN) -D_GNU_SOURCE -static $(INC_guest_linux)
LX_CLIENT   := guest/linux/mvm.c guest/linux/mvm.h include/minivmm_abi.h
LX_PROGS    := $(LX)/bin/init $(LX)/bin/hello $(LX)/bin/sweep-host
RIG_CACHE   ?= build/rig/cache

$(LX)/bin/init: guest/linux/init.c guest/linux/cmdline.c guest/linux/cmdline.h \
		guest/linux/workloads.c guest/linux/workloads.h $(LX_CLIENT)
	@mkdir -p $(dir $@)
	$(say) LXCC $@
	$(Q)$(CC) $(LX_CFLAGS) -o $@ $(filter %.c,$^)

$(LX)/bin/hello: guest/linux/hello.c guest/linux/workloads.c guest/linux/workloads.h $(LX_CLIENT)
	@mkdir -p $(dir $@)
	$(say) LXCC $@
	$(Q)$(CC) $(LX_CFLAGS) -o $@ $(filter %.c,$^)

# One program on the host (bench/sweep-vs-host, bench/peers) and in the guest.
build/bench/sweep-host: bench/sweep-host.c guest/linux/snappoint.c guest/linux/snappoint.h $(LX_CLIENT) $(FLAGS_STAMP)
	@mkdir -p $(dir $@)
	$(say) CC $<
	$(Q)$(CC) $(LX_CFLAGS) -o $@ bench/sweep-host.c guest/linux/snappoint.c guest/linux/mvm.c

$(LX)/bin/sweep-host: build/bench/sweep-host
	@mkdir -p $(dir $@)
	$(Q)cp $< $@

# The pagemap translation against a page of known content (tests/linux/pagemap.c).
$(LX)/test-pagemap: tests/linux/pagemap.c $(LX_CLIENT)
	@mkdir -p $(dir $@)
	$(say) LXCC $@
	$(Q)$(CC) $(LX_CFLAGS) -o $@ tests/linux/pagemap.c guest/linux/mvm.c

$(LX)/vmlinuz: scripts/debian-kernel
	$(say) KERNEL $@
	$(Q)scripts/debian-kernel $(RIG_CACHE) $@ >/dev/null

$(LX)/initrd.cpio.gz: $(LX_PROGS) scripts/linux-initrd
	$(say) CPIO $@
	$(Q)scripts/linux-initrd $@ $(LX_PROGS)

linux-guest: $(LX)/vmlinuz $(LX)/initrd.cpio.gz

# A hand-written guest (tests/guests/: common.inc, linked by guest.lds):
# $(call guest_bin,OBJDIR) in a pattern rule assembles $< into $@ by way of
# OBJDIR/$*.o and OBJDIR/$*.elf. The test guests (tests/tests.mk) and
# bench/peers' start-up guest are built with it.
define guest_bin
@mkdir -p $(1) $(dir $@)
$(say) GUESTAS $<
$(Q)$(GUEST_CC) -c -Iinclude -Itests/guests -o $(1)/$*.o $<
$(Q)ld -T tests/guests/guest.lds -o $(1)/$*.elf $(1)/$*.o
$(Q)objcopy -O binary $(1)/$*.elf $@
endef

build/bench/%.bin: bench/%.S tests/guests/common.inc include/minivmm_abi.h
	$(call guest_bin,build/bench)

include tests/tests.mk

run: 
	./scripts/run-experiment

lint:
	@files=$$(git ls-files '*.c' '*.h' 2>/dev/null || find . -name '*.[ch]'); \
	bad=$$(for f in $$files; do clang-format --style=file "$$f" | cmp -s - "$$f" || echo "$$f"; done); \
	if [ -n "$$bad" ]; then echo "clang-format would change:"; echo "$$bad"; \
		echo "fix with: make format"; exit 1; fi; echo "lint: ok"

format:
	clang-format -i --style=file $$(git ls-files '*.c' '*.h')

install: all
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(LIBEXECDIR) $(DESTDIR)$(MANDIR)/man1
	install -m 0755 minivmm $(DESTDIR)$(BINDIR)/minivmm
	install -m 0755 scripts/reservoir $(DESTDIR)$(BINDIR)/minivmm-reservoir
	install -m 0644 guest/guest.bin $(DESTDIR)$(LIBEXECDIR)/guest.bin
	install -m 0644 docs/minivmm.1 $(DESTDIR)$(MANDIR)/man1/minivmm.1

clean:
	rm -rf build minivmm guest/guest.bin scripts/reservoir tests/bin

.PHONY: all check-deps deps run lint format install clean test linux-guest
-include $(shell find build/host build/guest build/fuzz build/san build/plain -name '*.d' -type f 2>/dev/null)

# make print-VAR: a variable's value, for scripts (tests/static.sh reads INC_* and WARN).
print-%:
	@echo '$($*)'
