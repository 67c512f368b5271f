# The share of runs that diverged against the peak learning rate, one line per
# embedding norm.  Variables: n (blocks), colors, pts, xmin, xmax, xtics (the learning rates,
# fitted).
load gpdir.'/common.gp'
set logscale x
set xrange [xmin:xmax]
set xtics (real(word(xtics, 1)))
do for [i=2:words(xtics)] { set xtics add (real(word(xtics, i))) }
set format x '%g'
set xlabel 'peak learning rate'
set ylabel 'runs diverged (fraction)'
set yrange [-0.05:1.05]
set key top left
plot for [i=0:n-1] data index i using 1:2 with linespoints lc rgb color(i) pt ptype(i) ps 0.7 \
         title columnheader(1)
