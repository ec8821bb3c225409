# plot.gp: lab 01's figure, the theoretical FP32 peak of every device here and
# of published GPUs, one horizontal bar each, on a logarithmic axis (the CPU and
# the largest GPUs are two to three decades apart), with the value on each bar.
#
# The CSV (main.c's table) has the columns source ("here" or "published"),
# device, peak_tflops (your steps 2 and 3; empty when unknown) and name, among
# others; the rows come in the table's order, this machine's devices first,
# then the cards from the slowest to the fastest. The program passes data, out,
# format, style, devices and device_names, and machine (the CPU's name and
# cores). To restyle it, edit this file or the shared style, then rerun the
# "redraw" line the program printed. The key sits below the plot, where no bar
# can reach it, whatever the devices here.
load style
if (!exists("machine")) machine = 'this machine'

set title wrap('FP32 peak, SMs x cores per SM x clock x 2, of this machine ('.machine.') and of published GPUs', title_width).load_line
set xlabel 'TFLOPS, worked out by your steps 2 and 3 (logarithmic scale)'

# Rows from the top; bars from a power of ten below the slowest, and room on the
# right for the fastest one's value.
stats data using 0 nooutput
rows = STATS_records
stats data using 'peak_tflops' nooutput
base = 10.0**floor(log10(STATS_min) - 0.3)
top = STATS_max * 2.2
set logscale x 10
set xrange [base:top]
set format x '%g'
set yrange [rows - 0.4:-0.6]
set ytics scale 0 nomirror
set grid noytics nomytics
set key outside bottom center horizontal height 1.5

# A bar's label on the y axis: the device here ("cpu", "sim:0 (simulated)",
# "cuda:0 (H200)": a real GPU's model, or a reference figure would not say
# which card it is), or the card's name (the argument is unused: a gnuplot
# function needs one).
without(s, prefix) = strstrt(s, prefix) == 1 ? s[strlen(prefix) + 1:] : s
model(name) = without(without(name, 'NVIDIA '), 'GeForce ')
label_of(unused) = strcol('device') eq '' ? strcol('name') : \
    strcol('device') . (strstrt(strcol('device'), 'sim:') == 1 ? ' (simulated)' : \
                        strcol('device') eq 'cpu' || strcol('name') eq '' ? '' : ' ('.model(strcol('name')).')')
known(x) = x == x  # an unknown (empty) cell reads as NaN, which is not equal to itself
half = 0.34

plot data using (only('source', 'here', column('peak_tflops'))):0:(base):(column('peak_tflops')):($0 - half):($0 + half) \
         with boxxyerror fs solid 0.85 lt 2 title 'this machine', \
     data using (only('source', 'published', column('peak_tflops'))):0:(base):(column('peak_tflops')):($0 - half):($0 + half) \
         with boxxyerror fs solid 0.85 lt 1 title 'published GPUs', \
     data using (known(column('peak_tflops')) ? column('peak_tflops') : base):0: \
         (known(column('peak_tflops')) ? short_value(column('peak_tflops')) : 'unknown: not in your step 2 table'):ytic(label_of(0)) \
         with labels left offset char 0.5, 0 notitle
