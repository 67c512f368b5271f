# Embedding norm by character class over training (the periodic diagnostics), one panel
# per class, one curve per variant (mean over seeds, band from min to max), on a
# logarithmic axis (the norms of the variants differ by orders of magnitude).
# Variables: classes (space-separated), n (blocks), colors; data is the file prefix.
load gpdir.'/common.gp'
set logscale y
nc = words(classes)
rows = int((nc + 1) / 2)
set multiplot layout rows, 2 margins 0.1, 0.97, 0.12, 0.93 spacing 0.09, 0.14
set key center right
do for [c=1:nc] {
    f = data.'_'.word(classes, c).'.dat'
    set title word(classes, c) offset 0, -0.6
    set xlabel (c > nc - 2 ? 'step' : '')
    set ylabel (c % 2 == 1 ? 'embedding norm' : '')
    if (c > 1) { set key off }
    plot for [i=0:n-1] f index i using 1:3:4 with filledcurves \
             fc rgb color(i) fs transparent solid 0.15 noborder notitle, \
         for [i=0:n-1] f index i using 1:2 with lines lc rgb color(i) title columnheader(1)
}
unset multiplot
