/* libFuzzer: the option and size parsers on arbitrary argument vectors. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "experiment.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	/* --help prints to stdout; usage errors stay on stderr with the fuzzer's own reports. */
	if (!freopen("/dev/null", "w", stdout))
		abort();
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *buf = malloc(size + 1), *argv[34];
	struct config cfg;
	uint64_t bytes;
	int argc = 1;

	if (!buf)
		return 0;
	memcpy(buf, data, size);
	buf[size] = '\0';
	argv[0] = "minivmm";
	/* NUL-separated arguments. */
	for (size_t i = 0; i <= size && argc < 33;) {
		argv[argc++] = buf + i;
		i += strlen(buf + i) + 1;
	}
	argv[argc] = NULL;
	/* With --restore the guest, its RAM and vCPUs come from the snapshot, read after parsing. */
	if (options_parse(argc, argv, &cfg) == 0 && !cfg.restore_dir) {
		if (!cfg.vm.guest_path || cfg.vm.vcpus == 0 ||
		    cfg.vm.mem_bytes < MVM_MIN_MEM_BYTES ||
		    cfg.vm.mem_bytes % MVM_RAM_ALIGN_BYTES || !cfg.vm.backing)
			abort();
	}
	if (mm_parse_size(buf, &bytes) == 0 && buf[0] == '\0')
		abort();
	free(buf);
	return 0;
}
