# Final loss against the peak learning rate, one curve per group of a sweep, in its dash
# and mark: the mean over the seeds that did not diverge, a bar from the lowest to the
# highest of them, and the group's mark on a row of its own above the curves where some
# seed diverged (data file `diverged`: x, y, colour, group, point type); group i is drawn
# a little apart along the axis (shift(i)) so that bars at one value do not hide each
# other.  Variables: n (blocks), colors, dashes, pts, diverged
# (file or ''), xmin, xmax, xtics, ymin, ymax, xlabel, ylabel.
load gpdir.'/common.gp'
set logscale x
set xrange [xmin:xmax]
set yrange [ymin:ymax]
set xtics (real(word(xtics, 1)))
do for [i=2:words(xtics)] { set xtics add (real(word(xtics, i))) }
set format x '%g'
set xlabel xlabel
set ylabel ylabel
set key outside right top samplen 2 spacing 1.0
shift(i) = 10 ** (0.025 * (i - (n - 1) / 2.0))
if (diverged ne '') {
    plot for [i=0:n-1] data index i using ($1 * shift(i)):2:3:4 with yerrorbars \
             lc rgb color(i) pt ptype(i) ps 0.5 notitle, \
         for [i=0:n-1] data index i using ($1 * shift(i)):2 with linespoints lc rgb color(i) \
             dt dash(i) pt ptype(i) ps 0.5 title columnheader(1), \
         diverged using ($1 * shift($4)):2:5:3 with points pt variable lc rgb variable \
             ps 0.7 notitle, \
         keyentry with lines lc rgb 'white' title 'marks above: a seed diverged'
} else {
    plot for [i=0:n-1] data index i using ($1 * shift(i)):2:3:4 with yerrorbars \
             lc rgb color(i) pt ptype(i) ps 0.5 notitle, \
         for [i=0:n-1] data index i using ($1 * shift(i)):2 with linespoints lc rgb color(i) \
             dt dash(i) pt ptype(i) ps 0.5 title columnheader(1)
}
