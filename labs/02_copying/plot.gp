# plot.gp: lab 02's figure: copy bandwidth against copy size, between the host
# and one device, each direction, from pageable and from pinned host memory
# (CUDA's bandwidthTest, drawn).
#
# The CSV (main.c's results) has the columns device, bytes, h2d_pageable_gbps,
# h2d_pinned_gbps, d2h_pageable_gbps and d2h_pinned_gbps; the program passes
# data, out, format, style, devices and device_names, and this lab's own
# variable kind ('cpu', 'sim' or 'cuda'). On a GPU a dashed line shows what a
# copy that took 10 microseconds whatever its size would reach: where the
# points follow it, the latency is the whole cost. To restyle the figure, edit
# this file or the shared style, then rerun the "redraw" line the program printed.
load style
if (!exists("kind")) kind = 'sim'

if (kind eq 'cpu') {
    set title wrap(sprintf('Copies on the cpu are memcpy within RAM (%s): no bus is crossed', device_names), title_width).load_line
} else {
    if (kind eq 'sim') {
        set title wrap(sprintf('Copies between the host and a simulated GPU, %s: a memcpy and a modelled 10 µs each', devices), title_width).load_line
    } else {
        set title wrap(sprintf('Copy bandwidth between the host and %s', device_names), title_width).load_line
    }
}
set xlabel 'size of one copy'
set ylabel 'bandwidth (GB/s; 1 GB = 10⁹ bytes)'
stats data using 'bytes' nooutput
max_bytes = STATS_max
eval bytes_axis('x', STATS_min, STATS_max)
# A label every 16x (every 4x for a --quick run's few sizes): nine labels of
# sizes do not fit beside the key.
lo = floor(log2(STATS_min))
hi = ceil(log2(STATS_max))
eval sprintf('set xtics (%s)', pow2_list(lo, hi, hi - lo > 10 ? 4 : 2, 1))

# The y range from the data alone, so that the dashed line does not stretch it.
low = 1e30
high = 0
do for [c in 'h2d_pageable_gbps h2d_pinned_gbps d2h_pageable_gbps d2h_pinned_gbps'] {
    stats data using c nooutput
    low = STATS_min < low ? STATS_min : low
    high = STATS_max > high ? STATS_max : high
}
set logscale y
set yrange [low / 2 : high * 2]
set format y '%g'

# Past the CPU's caches a memcpy runs at the speed of the host's memory, and
# of where the kernel placed its pages (a first touch, another NUMA node): at
# 64-256 MiB a simulated GPU's copies dropped to 2 GB/s, which reads as "big
# copies are slow". A real GPU's do not; the figure says which is which.
big = 16 * 1024 * 1024
if (kind ne 'cuda' && max_bytes > big) {
    set arrow from big, graph 0 to big, graph 1 nohead ls 100
    # Under the key, in the margin the key leaves: inside the plot it crossed
    # the dashed line and the points.
    set label "right of the dashed line:\nthe host's memory, and\nwhere its pages lie, not a\nbus: on a GPU big copies\nare the fastest" \
        at screen 0.625, screen 0.45 left front textcolor rgb '#555555'
}

latency = 10e-6
plot data using 'bytes':'h2d_pageable_gbps' with linespoints lt 1 title 'host->device, pageable', \
     data using 'bytes':'h2d_pinned_gbps' with linespoints lt 2 title 'host->device, pinned', \
     data using 'bytes':'d2h_pageable_gbps' with linespoints lt 3 title 'device->host, pageable', \
     data using 'bytes':'d2h_pinned_gbps' with linespoints lt 4 title 'device->host, pinned', \
     (kind eq 'cpu' ? NaN : x / latency / 1e9) with lines ls 100 title (kind eq 'cpu' ? '' : '10 µs a copy')
