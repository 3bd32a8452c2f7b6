/* fuzz_main.c - the libFuzzer entry point around one target, named at build time (-DFUZZ_ENTRY=fuzz_image). */
#include "fuzz_targets.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	(void)FUZZ_ENTRY(data, size);
	return 0;
}
