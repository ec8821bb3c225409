/* fuzz_safetensors.c: the safetensors reader (labkit/safetensors.h) on any
 * bytes as a file: opened (the header parsed and checked against the data),
 * every tensor described, and each one that fits loaded onto the CPU. Any
 * refusal is fine; a crash, a leak or a hang is not. */
#include "fuzz_input.h"
#include "labkit/safetensors.h"
#include "labkit/tensor.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static fuzz_file file;
    fuzz_file_write(&file, "input.safetensors", data, size);
    safetensors_file *f = NULL;
    if (safetensors_open(&f, file.path) != STATUS_OK) return 0;
    const int n = safetensors_count(f);
    for (int i = 0; i < n; ++i) {
        safetensors_info info;
        if (safetensors_info_at(f, i, &info) != STATUS_OK) continue;
        (void)safetensors_metadata(f, info.name);
        tensor *t = NULL;
        if (safetensors_load(f, info.name, device_cpu(), &t) == STATUS_OK) tensor_free(t);
    }
    (void)safetensors_metadata(f, "format");
    safetensors_close(f);
    return 0;
}
