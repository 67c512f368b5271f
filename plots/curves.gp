# A quantity over training steps, one curve per variant: the mean over seeds as a line
# and the band between the smallest and largest seed.  Each curve carries its point type
# every mark_every rows, curve i starting at row mark(i), so that curves lying on each
# other still show each variant's marks; the key shows line and mark.  Variables: n
# (blocks), colors, dashes, pts, mark_every, ylabel, logy (1 for a log axis, with ymin,
# ymax and ytics fitted to the data), zoom (1 for a second panel showing steps zoom_from
# to zoom_to on a linear axis from zoom_ymin to zoom_ymax; the key goes in a strip of its
# own above both panels).
load gpdir.'/common.gp'
set xlabel 'step'
set ylabel ylabel
if (!exists("mark_every")) mark_every = n
mark(i) = int(i * mark_every / n)
if (!exists("zoom")) zoom = 0
if (logy) {
    set logscale y
    set yrange [ymin:ymax]
    set ytics (real(word(ytics, 1)))
    do for [i=2:words(ytics)] { set ytics add (real(word(ytics, i))) }
}
# The plot: bands, lines, the staggered marks, and the key's entries (no data); no
# command is built from strings and evaluated.
if (zoom) {
    # The left panel is the whole run, the right one its end; the key gets a strip of
    # its own across the top of the figure, where it hides no curve.
    set multiplot
    set key off
    set tmargin at screen 0.76
    set bmargin at screen 0.2
    set lmargin at screen 0.12
    set rmargin at screen 0.51
    set title 'whole run' offset 0, -0.5
    do for [panel=1:2] {
        if (panel == 2) {
            unset logscale y
            set yrange [zoom_ymin:zoom_ymax]
            set ytics autofreq
            set xrange [zoom_from:zoom_to]
            set ylabel ''
            set lmargin at screen 0.59
            set rmargin at screen 0.98
            set title 'end of the run, linear axis' offset 0, -0.5
        }
        plot for [i=0:n-1] data index i using 1:3:4 with filledcurves fc rgb color(i) \
                 fs transparent solid 0.15 noborder notitle, \
             for [i=0:n-1] data index i using 1:2 with lines lc rgb color(i) dt dash(i) \
                 notitle, \
             for [i=0:n-1] data index i every mark_every::mark(i) using 1:2 with points \
                 lc rgb color(i) pt ptype(i) ps 0.5 notitle
    }
    # the key strip: the same curves with no data, only their titles
    unset title
    unset xlabel
    unset border
    unset tics
    unset grid
    set xrange [0:1]
    set yrange [0:1]
    set tmargin at screen 1.0
    set bmargin at screen 0.84
    set lmargin at screen 0.02
    set rmargin at screen 0.98
    set key center center horizontal maxrows 2 samplen 2 spacing 1.0 width 1
    plot for [i=0:n-1] data index i using 1:(NaN) with linespoints lc rgb color(i) \
             dt dash(i) pt ptype(i) ps 0.5 title columnheader(1)
    unset multiplot
} else {
    # More than three curves: the key goes beside the plot, where it hides no data.
    if (n > 3) { set key outside right top } else { set key top right }
    plot for [i=0:n-1] data index i using 1:3:4 with filledcurves fc rgb color(i) \
             fs transparent solid 0.15 noborder notitle, \
         for [i=0:n-1] data index i using 1:2 with lines lc rgb color(i) dt dash(i) notitle, \
         for [i=0:n-1] data index i every mark_every::mark(i) using 1:2 with points \
             lc rgb color(i) pt ptype(i) ps 0.5 notitle, \
         for [i=0:n-1] data index i using 1:(NaN) with linespoints lc rgb color(i) \
             dt dash(i) pt ptype(i) ps 0.5 title columnheader(1)
}
