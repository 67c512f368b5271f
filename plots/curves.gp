# A quantity over training steps, one curve per variant: the mean over seeds as a line
# and the band between the smallest and largest seed.  Variables: n (blocks), colors,
# dashes, pts, ylabel, logy (1 for a log axis, with ymin, ymax and ytics fitted to the
# data), points (1 to mark the sampled steps), zoom (1 for a second panel showing steps
# zoom_from to zoom_to on a linear axis from zoom_ymin to zoom_ymax; the key goes in
# the first panel).
load gpdir.'/common.gp'
set xlabel 'step'
set ylabel ylabel
if (!exists("points")) points = 0
if (!exists("zoom")) zoom = 0
if (logy) {
    set logscale y
    set yrange [ymin:ymax]
    eval('set ytics '.ytics)
}
# The plot: bands, then lines (with the points at the sampled steps when points = 1).
bands = 'for [i=0:n-1] data index i using 1:3:4 with filledcurves fc rgb color(i) '. \
    'fs transparent solid 0.15 noborder notitle'
lines = points ? \
    'for [i=0:n-1] data index i using 1:2 with linespoints lc rgb color(i) dt dash(i) '. \
    'pt ptype(i) ps 0.45 title columnheader(1)' : \
    'for [i=0:n-1] data index i using 1:2 with lines lc rgb color(i) dt dash(i) '. \
    'title columnheader(1)'
if (zoom) {
    # The left panel is the whole run, with the key at its top right (a loss falls:
    # the corner is empty), the right one its end.
    set multiplot layout 1, 2 margins 0.12, 0.98, 0.25, 0.9 spacing 0.08
    set key top right samplen 2 spacing 1.0
    set title 'whole run' offset 0, -0.5
    eval('plot '.bands.', '.lines)
    set key off
    unset logscale y
    set yrange [zoom_ymin:zoom_ymax]
    set ytics autofreq
    set xrange [zoom_from:zoom_to]
    set ylabel ''
    set title 'end of the run, linear axis' offset 0, -0.5
    eval('plot '.bands.', '.lines)
    unset multiplot
} else {
    # More than three curves: the key goes beside the plot, where it hides no data.
    if (n > 3) { set key outside right top } else { set key top right }
    eval('plot '.bands.', '.lines)
}
