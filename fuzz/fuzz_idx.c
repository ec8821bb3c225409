/* fuzz_idx.c: lab 05's IDX reader (labs/common/idx.c) on any bytes
 * as a pair of files: the first two bytes of the input (big-endian) say how
 * many of the next are the images file, the rest is the labels file. */
#include "data.h"
#include "fuzz_input.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static fuzz_file images, labels;
    if (size < 2) return 0;
    size_t split = (size_t)data[0] << 8 | data[1];
    if (split > size - 2) split = size - 2;
    fuzz_file_write(&images, "images-idx3-ubyte", data + 2, split);
    fuzz_file_write(&labels, "labels-idx1-ubyte", data + 2 + split, size - 2 - split);
    dataset d;
    if (dataset_load_idx(&d, images.path, labels.path) == STATUS_OK) dataset_free(&d);
    return 0;
}
