# A quantity over training steps, one curve per variant: the mean over seeds as a line
# and the band between the smallest and largest seed.  Variables: n (blocks), colors,
# dashes, ylabel, logy (1 for a log axis), points (1 to mark the sampled steps).
load gpdir.'/common.gp'
set xlabel 'step'
set ylabel ylabel
if (logy) { set logscale y }
# More than three curves: the key goes beside the plot, where it hides no data.
if (n > 3) { set key outside right top } else { set key top right }
if (!exists("points")) points = 0
plot for [i=0:n-1] data index i using 1:3:4 with filledcurves \
         fc rgb color(i) fs transparent solid 0.15 noborder notitle, \
     for [i=0:n-1] data index i using 1:2 with lines lc rgb color(i) dt dash(i) \
         title columnheader(1), \
     for [i=0:n-1] data index i using 1:(points ? $2 : NaN) with points \
         lc rgb color(i) pt 7 ps 0.35 notitle
