# A sequential study's path: per comparison (a block each, titled by its label) the
# estimate at each look with its repeated confidence interval against the seeds per
# variant, the looks joined by a line and a ring around the look where it stopped; the
# grey band is +-margin (the equivalence margin), the grey line zero, the dashed dark
# grey line the target effect when the study declares one.  Variables: n (blocks), colors,
# xmax, xtics (the looks), ymin, ymax, margin, target (optional), ylabel.
load gpdir.'/common.gp'
set xrange [0:xmax]
set yrange [ymin:ymax]
set xtics (word(xtics, 1) real(word(xtics, 1)))
do for [i=2:words(xtics)] { set xtics add (word(xtics, i) real(word(xtics, i))) }
set xlabel 'seeds per variant'
set ylabel ylabel
set key below  # under the plot: a key never covers a point
if (margin > 0) {
    set object 1 rectangle from graph 0, first -margin to graph 1, first margin \
        behind fc rgb '#888888' fs transparent solid 0.2 noborder
}
set arrow 1 from graph 0, first 0 to graph 1, first 0 nohead lc rgb '#555555' lw 0.8
if (exists('target')) {
    set arrow 2 from graph 0, first target to graph 1, first target nohead \
        lc rgb '#333333' lw 0.8 dt 2
    set label 1 'target' at graph 0.01, first target left offset 0, 0.6 tc rgb '#333333'
}
# the comparisons a little apart along the axis, so that intervals at one look do not
# hide each other
off(i) = xmax * 0.012 * (i - (n - 1) / 2.0)
plot for [i=0:n-1] data index i using ($1 + off(i)):2:3:4 with yerrorlines \
         lc rgb color(i) pt 7 ps 0.6 title columnheader(1), \
     for [i=0:n-1] data index i using ($1 + off(i)):($5 == 1 ? $2 : 1/0) with points \
         lc rgb color(i) pt 6 ps 1.6 notitle
