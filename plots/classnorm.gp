# Embedding norm by character class over training (the periodic diagnostics), one panel
# per class in a row, one curve per variant (mean over seeds, band from min to max), on a
# logarithmic axis (the norms of the variants differ by orders of magnitude) shared by
# the panels; each curve in its dash and, every mark_every rows from row i * mark_every / n,
# its mark (as in curves.gp).  Variables: classes (space-separated), n (blocks), colors,
# dashes, pts, mark_every, ymin, ymax, ytics (the axis, fitted to every panel's data),
# xstep, xmax (the step axis); data is the file prefix.
load gpdir.'/common.gp'
set logscale y
set yrange [ymin:ymax]
set ytics (real(word(ytics, 1)))
do for [i=2:words(ytics)] { set ytics add (real(word(ytics, i))) }
nc = words(classes)
if (!exists("mark_every")) mark_every = n
set multiplot layout 1, nc margins 0.12, 0.98, 0.3, 0.88 spacing 0.04
set xtics xstep
set xrange [0:xmax]
set key center right samplen 2 spacing 1.0
set xlabel 'step'
do for [c=1:nc] {
    f = data.'_'.word(classes, c).'.dat'
    set title word(classes, c) offset 0, -0.6
    set ylabel (c == 1 ? 'embedding norm' : '')
    if (c > 1) { set key off; set format y '' }
    plot for [i=0:n-1] f index i using 1:3:4 with filledcurves \
             fc rgb color(i) fs transparent solid 0.15 noborder notitle, \
         for [i=0:n-1] f index i using 1:2 with lines lc rgb color(i) dt dash(i) notitle, \
         for [i=0:n-1] f index i every mark_every::int(i * mark_every / n) using 1:2 \
             with points lc rgb color(i) pt ptype(i) ps 0.5 notitle, \
         for [i=0:n-1] f index i using 1:(NaN) with linespoints lc rgb color(i) dt dash(i) \
             pt ptype(i) ps 0.5 title columnheader(1)
}
unset multiplot
