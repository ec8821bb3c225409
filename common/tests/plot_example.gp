# plot_example.gp: a lab's plot.gp in miniature, drawn by the unit tests
# (test_results). GFLOP/s against the matrix size N, one line per device, on
# logarithmic axes, with each device's peak dashed in the device's colour.
#
# The CSV (results.h) has the columns device, n, gflops and peak_gflops; the
# program passes data, out, format, style, devices and device_names, and this
# lab's own variable, precision ('float32'). To restyle the figure, edit this
# file or the shared style, then rerun the "redraw" line the program printed.
load style
if (!exists("precision")) precision = 'float32'

set title wrap(sprintf('N x N matrix products, %s, on %s', precision, device_names), title_width)
set xlabel 'matrix size N'
set ylabel 'GFLOP/s'
stats data using 'n' nooutput
eval pow2_axis('x', STATS_min, STATS_max)
set logscale y
set format y '%g'

plot for [i = 1:words(devices)] data \
         using 'n':(only('device', word(devices, i), column('gflops'))) \
         with linespoints lt i title word(devices, i), \
     for [i = 1:words(devices)] data \
         using 'n':(only('device', word(devices, i), column('peak_gflops'))) \
         with lines lt i dt 2 title word(devices, i).' peak'
