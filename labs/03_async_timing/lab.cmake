list(APPEND LAB_SOURCES ${dir}/workloads.c)

# The check sees what your benchmark asks of the events: every call of
# event_elapsed_ms in a check program goes through the check's wrapper first.
set(LAB_CHECK_LINK_OPTIONS "-Wl,--wrap=event_elapsed_ms")
