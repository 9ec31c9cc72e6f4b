/* The vCPUs' stack slots (kernel.h): one FW_STACK_BYTES slot each, indexed by vCPU. */
#include "kernel.h"

/*
 * Here, below everything that indexes it (start.S's boot stack, the TSS
 * in cpu.c, the fault state and this_cpu() of kernel.h): defined in
 * main.c, it made the trap path and the VM code call back up into main.
 */
char fw_stacks[FW_MAX_VCPUS * FW_STACK_BYTES] __attribute__((aligned(4096)));
