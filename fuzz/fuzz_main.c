/* fuzz_main.c - the libFuzzer entry point around one target, named at build time (-DFUZZ_ENTRY=fuzz_image).
 * Targets that read assemblies (-DFUZZ_PE_FIELDS) mutate half of their inputs field by field
 * (fuzz_pe_fields), the other half as libFuzzer does. */
#include "fuzz_targets.h"

#ifdef FUZZ_PE_FIELDS
#include "fuzz_pe_fields.h"

size_t LLVMFuzzerMutate(uint8_t *data, size_t size, size_t max_size);
size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size, unsigned int seed);

size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size, unsigned int seed)
{
	if (seed & 1 && fuzz_pe_fields(data, size, seed >> 1))
		return size;
	return LLVMFuzzerMutate(data, size, max_size);
}
#endif

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	(void)FUZZ_ENTRY(data, size);
	return 0;
}
