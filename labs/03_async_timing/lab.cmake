list(APPEND LAB_SOURCES ${dir}/workloads.c)

# The check sees what your benchmark asks of the events and the chunks your host
# work counts, can make a device's peak unknown and can refuse an event: every
# call of event_elapsed_ms, host_work_chunk, device_get_properties and
# event_create in a check program goes through the check's wrappers first
# (device_get_properties: the harness's, check.h's check_pretend_unknown_peak).
set(LAB_CHECK_LINK_OPTIONS
    "-Wl,--wrap=event_elapsed_ms,--wrap=host_work_chunk,--wrap=device_get_properties,--wrap=event_create")
