# The effect of each embedding norm against none (primary metric, treatment - baseline)
# with its 95 % interval, by model size; the grey band is +-minimum effect and the line
# y = 0.  Variables: n (blocks), colors, pts, min_effect, ylabel, xmin, xmax, xtics (the model
# sizes), ymin, ymax (fitted to the intervals, zero and the band).
load gpdir.'/common.gp'
set logscale x
set xrange [xmin:xmax]
set yrange [ymin:ymax]
set xtics (word(xtic_labels, 1) real(word(xtics, 1)))
do for [i=2:words(xtics)] { set xtics add (word(xtic_labels, i) real(word(xtics, i))) }
set mxtics default
set xlabel 'parameters'
set ylabel ylabel
set key below  # under the plot: a key never covers a point
set object 1 rectangle from graph 0, first -min_effect to graph 1, first min_effect \
    behind fc rgb '#888888' fs transparent solid 0.2 noborder
set arrow 1 from graph 0, first 0 to graph 1, first 0 nohead lc rgb '#555555' lw 0.8
plot for [i=0:n-1] data index i using ($1 * (1 + 0.04 * (i - (n - 1) / 2.0))):2:3:4 \
         with yerrorlines lc rgb color(i) pt ptype(i) ps 0.6 title columnheader(1)
