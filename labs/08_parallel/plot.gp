# plot.gp: lab 08's figure: speed-up against workers, one line per kind of
# work, beside the ideal (n workers, n times as fast), each line's key entry
# with its speed-up on the most workers.
#
# The CSV (main.c's results) has one row per part and count of workers: part,
# workers, on, seconds, speedup, efficiency_percent, and for the training
# copies_per_step and epoch_losses. The program passes data, out, format,
# style, devices and device_names, and busy_cores (how many cores other
# programs kept busy during the run) and cores. To restyle the figure, edit this
# file or the shared style, then rerun the "redraw" line the program printed.
load style

array parts[4] = ['cores: OpenMP i-k-j loop', 'cores: OpenBLAS', 'devices: products at once', \
                  'training: data-parallel epoch']
array names[4] = ['your OpenMP i-k-j loop', 'OpenBLAS', 'products on GPUs at once', \
                  'data-parallel training']

# The title names the cores and the GPUs, a real GPU with its model from
# device_names ("cuda:0: NVIDIA H200, ..."), so that a reference figure says
# which machine it is; with one GPU it says why no GPU pair is drawn.
after(s, p) = strstrt(s, p) ? s[strstrt(s, p) + strlen(p):] : ''
upto_comma(s) = strstrt(s, ', ') ? s[1:strstrt(s, ', ') - 1] : s
without(s, prefix) = strstrt(s, prefix) == 1 ? s[strlen(prefix) + 1:] : s
model(d) = without(without(upto_comma(after(device_names, d.': ')), 'NVIDIA '), 'GeForce ')
gpus = ''
ngpus = 0
do for [d in devices] {
    if (d ne 'cpu') {
        ngpus = ngpus + 1
        gpus = gpus.(gpus eq '' ? '' : ', ').d.(strstrt(d, 'sim:') == 1 || model(d) eq '' ? '' : ' ('.model(d).')')
    }
}
cores_here = exists("cores") ? sprintf("the cpu's %s cores", cores) : "the cpu's cores"
set title "The same work on more workers: how many times faster?\n". \
    wrap('threads on '.cores_here.(ngpus > 1 ? '; GPUs '.gpus : ''), title_width). \
    (ngpus == 1 ? "\n".wrap('one GPU, '.gpus.': no pair to compare', title_width) : '').load_line
# The key goes right of the plot, each entry on two lines (what, then its
# speed-up), so that the plot keeps the figure's height: below the plot, one
# entry a line, it left the plot 313 pixels of 1080 under load (174 in SVG).
set rmargin at screen 0.62
set key at screen 0.635, graph 1 left top vertical Left reverse samplen 2 spacing 2.4 * ks width 0
set xlabel 'workers (threads on the cores, or GPUs)'
# Under load the wall clock's speed-ups are the other programs' share of the
# cores, not the loop's: the figure says so under the key, and where the
# lesson still holds (the check's CPU times per thread).
if (busy >= 0.33) {
    set label "under load, the speed-ups are\nthe free cores', not the loop's:\n./lab check 08 counts CPU time" \
        at screen 0.635, screen 0.2 left front textcolor rgb load_colour
}
set ylabel 'speed-up over one worker'
stats data using 'workers' nooutput
top = STATS_max
eval integer_axis('x', 1, top)
# Past 8 workers a label at every count crowds the axis (10 to 16 touched):
# 1, then every second count.
if (top > 8) {
    set xtics 2
    set xtics add ('1' 1)
}
stats data using 'speedup' nooutput
set yrange [0 : (STATS_max > top ? STATS_max : top) * 1.15]
set ytics format '%gx'

# Other programs on the cores take their share of them: the wall clock's
# speed-ups are then smaller than the cores allow. style.gp's load_line says
# so under the title (busy_cores: other programs' cores over the whole run).

# Each line's speed-up with the most workers, in its key entry: the rows of
# a part come in order of workers, so the last one read is that one.
array last[4]
array most[4]
do for [i = 1:4] {
    last[i] = NaN
    most[i] = 0
    stats data using (strcol('part') eq parts[i] ? (last[i] = column('speedup'), most[i] = column('workers')) : 0) nooutput
}
entry(i) = names[i].(most[i] > 1 ? sprintf(":\n%.2fx on %d", last[i], most[i]) : '')
plot x with lines ls 100 title "ideal: n workers,\nn times as fast", \
     for [i = 1:4] data using 'workers':(only('part', parts[i], column('speedup'))) \
         with linespoints lt i title entry(i)
