# A forest plot of the paired effects on one primary metric, grouped by study: per
# comparison the mean difference (treatment - baseline) and its 95 % interval (the
# decision interval), the band of +-minimum effect of its study (grey), and the design's
# minimum detectable effect at 80 % power marked with open diamonds at +-MDE; each
# group's header on a row of its own, from the left edge.  Variables: rows (rows with the
# headers), lmargin (characters), nheads and per header i head<i> (its text), head_y<i>
# (its row) and head_kind<i> (1 a study, 2 a note under it), xlabel, xmin, xmax, xstep
# (the x axis, fitted to the intervals, the bands and the diamonds), namefont (optional:
# the font of a study's header; LM Roman 10 Bold by default).  The headers are data:
# strings assigned on the command line in single quotes, never evaluated; enhanced text
# is off (common.gp), so an underscore is an underscore.
load gpdir.'/common.gp'
if (!exists('namefont')) namefont = 'LM Roman 10 Bold,9'
set xlabel xlabel
set xrange [xmin:xmax]
set yrange [0.4:rows + 0.6]
set ytics scale 0
set grid noytics
set key off
# no left border and the zero line drawn per row: a header row's text crosses no line
set border 1 lw 0.8
set lmargin lmargin
set rmargin 3
set xtics xstep
set mxtics 2
do for [i=1:nheads] {
    study = value(sprintf('head_kind%d', i)) == 1
    set label i value(sprintf('head%d', i)) at character 1, first value(sprintf('head_y%d', i)) \
        left font (study ? namefont : 'LM Roman 10 Italic,9') \
        tc rgb (study ? '#222222' : '#555555')
}
plot data using (0):1:(-$6):($6):($1 - 0.3):($1 + 0.3) with boxxyerror \
         fs transparent solid 0.25 noborder lc rgb '#888888', \
     data using (0):($1 - 0.5):(0):(1.0) with vectors nohead lc rgb '#888888' lw 0.6, \
     data using 2:1:3:4:ytic(7) with xerrorbars lc rgb '#0072B2' pt 7 ps 0.6, \
     data using 5:1 with points lc rgb '#D55E00' pt 12 ps 0.7, \
     data using (-$5):1 with points lc rgb '#D55E00' pt 12 ps 0.7
