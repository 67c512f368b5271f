# Validation loss at the end of training: one point per seed, and the mean with a bar
# of one standard deviation, per variant.  Variables: n (blocks), colors, pts, means (the
# file of means with the variant names).
load gpdir.'/common.gp'
set ylabel 'final validation loss (nats)'
set xrange [0.4:n + 0.6]
set xtics scale 0
set grid noxtics
set key off
plot for [i=0:n-1] data index i using 1:2 with points lc rgb color(i) pt ptype(i) ps 0.6, \
     means using 1:2:3:xtic(4) with yerrorbars lc rgb '#555555' pt 5 ps 0.9 lw 1.2
