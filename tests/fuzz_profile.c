/* fuzz_profile — libFuzzer target for the profile reader (make fuzz). Any input is parsed as a
 * profile for a fixed fictional device and every family is looked up through it; the target aborts
 * if anything the file says could reach a kernel without passing the device's limits. */
#include <string.h>

#include "ocx_internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static ocx_device_info dev;
    if (!dev.name[0]) {
        strcpy(dev.name, "Fuzz Device");
        strcpy(dev.normalized_name, "fuzz-device");
        strcpy(dev.vendor, "Fuzz");
        strcpy(dev.driver_version, "1.0");
        dev.type = OCX_DEVICE_GPU;
        dev.compute_units = 8;
        dev.max_work_group_size = 256;
        dev.max_work_item_sizes[0] = dev.max_work_item_sizes[1] = 256;
        dev.max_work_item_sizes[2] = 64;
        dev.local_mem_bytes = dev.local_mem_max_bytes = 16384;
        dev.has_fp64 = 1;
    }
    ocx__profile_fuzz((const char *)data, size, &dev);
    return 0;
}
