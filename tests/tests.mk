# Tests, included by the Makefile. `make test` builds and runs every tier.
UNIT_SRC   := $(wildcard tests/unit/*.c)
UNIT_OBJ   := $(UNIT_SRC:%.c=build/host/%.o)
TEST_GUEST_SRC := $(wildcard tests/guests/*.S)
TEST_GUESTS := $(patsubst tests/guests/%.S,tests/bin/%.bin,$(TEST_GUEST_SRC))

build/host/tests/unit/%.o: HOST_CFLAGS += -Itests/unit

tests/bin/unit: $(UNIT_OBJ) $(VMM_LIB_OBJ)
	@mkdir -p $(dir $@)
	$(say) LD $@
	$(Q)$(CC) $(HOST_LDFLAGS) -o $@ $^ $(HOST_LDLIBS)

# Tiny hand-written guests (CPL0 only) for device and misbehaviour tests.
tests/bin/%.bin: tests/guests/%.S include/minivmm_abi.h
	@mkdir -p build/tests $(dir $@)
	$(say) GUESTAS $<
	$(Q)$(GUEST_CC) -c -Iinclude -o build/tests/$*.o $<
	$(Q)ld -T tests/guests/guest.lds -o build/tests/$*.elf build/tests/$*.o
	$(Q)objcopy -O binary build/tests/$*.elf $@

test-build: all tests/bin/unit $(TEST_GUESTS)

test: test-build
	@./tests/run

.PHONY: test-build
