list(APPEND LAB_SOURCES ${dir}/workloads.c)

# The check sees what your benchmark asks of the events and the chunks your host
# work counts: every call of event_elapsed_ms and host_work_chunk in a check
# program goes through the check's wrappers first.
set(LAB_CHECK_LINK_OPTIONS "-Wl,--wrap=event_elapsed_ms,--wrap=host_work_chunk")
