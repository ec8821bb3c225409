# plot.gp: lab 08's figure: speed-up against workers, one line per kind of
# work, beside the ideal (n workers, n times as fast), each point labelled
# with its speed-up.
#
# The CSV (main.c's results) has one row per part and count of workers: part,
# workers, on, seconds, speedup, efficiency_percent, and for the training
# loss, copies_per_step and epoch_losses. The program passes data, out,
# format, style, devices and device_names. To restyle the figure, edit this
# file or the shared style, then rerun the "redraw" line the program printed.
load style

array parts[4] = ['cores: OpenMP i-k-j loop', 'cores: OpenBLAS', 'devices: products at once', \
                  'training: data-parallel epoch']
array names[4] = ['your OpenMP i-k-j loop (threads)', 'OpenBLAS (threads)', 'products at once (GPUs)', \
                  'data-parallel training (GPUs)']

# The title names the GPUs; the key goes below the plot, which keeps the
# whole width.
gpus = ''
do for [d in devices] { if (d ne 'cpu') { gpus = gpus.(gpus eq '' ? '' : ', ').d } }
set title "The same work on more workers: how many times faster?\nthreads on the cpu's cores".(gpus eq '' ? '' : '; GPUs '.gpus)
set key outside bottom center horizontal maxcols 3 width 1 samplen 2.5
set xlabel 'workers (threads on the cores, or GPUs)'
set ylabel 'speed-up over one worker'
stats data using 'workers' nooutput
top = STATS_max
eval integer_axis('x', 1, top)
stats data using 'speedup' nooutput
set yrange [0 : (STATS_max > top ? STATS_max : top) * 1.15]
set ytics format '%gx'

# The speed-up of every point with more than one worker beside it, in its
# line's colour, the lines' labels one above the other where they meet.
speed_label(y) = sprintf('%.2fx', y)
many(y) = column('workers') > 1 ? y : NaN
plot x with lines ls 100 title 'ideal: n workers, n times as fast', \
     for [i = 1:4] data using 'workers':(only('part', parts[i], column('speedup'))) \
         with linespoints lt i title names[i], \
     for [i = 1:4] data using 'workers':(many(only('part', parts[i], column('speedup')))):(speed_label(column('speedup'))) \
         with labels left offset 0.9, 0.9 * (2.5 - i) textcolor lt i font sprintf(',%g', font_size * 0.8) notitle
