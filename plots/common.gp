# The look shared by every figure, loaded first by each script.  lua/repro/report/plot.lua
# runs the scripts with -e assigning: data (the .dat file), out (the output path), fmt
# ('pdf' for the paper, 'png' for the README copies), gpdir (this directory), width and
# height (inches: the size the figure is printed at, so that its 9 pt text is 9 pt on
# the page) and the script's own variables.  PDF text is set in Latin Modern, the
# paper's font; enhanced text is off, so labels from the data print as they are.  Cairo
# sets a font size at 96 dpi (9 would print at 12 pt), hence fontscale 0.75; the PNG
# copies are 150 pixels per inch.
if (!exists("width")) width = 5.0
if (!exists("height")) height = 3.0
if (fmt eq 'pdf') {
    set terminal pdfcairo size width, height font 'LM Roman 10,9' fontscale 0.75 \
        linewidth 1.0 noenhanced
} else {
    set terminal pngcairo size int(width * 150), int(height * 150) font 'LM Roman 10,9' \
        fontscale 1.5 linewidth 2.0 noenhanced
}
set output out
set border 3 lw 0.8
set tics nomirror out scale 0.6
set grid lw 0.4 lc rgb '#dddddd'
set key noautotitle
set key spacing 1.1 samplen 2.5
# Colour, dash type and point type of block i (0-based), from the space-separated lists.
color(i) = word(colors, i + 1)
dash(i) = exists("dashes") ? int(word(dashes, i + 1)) : 1
ptype(i) = exists("pts") ? int(word(pts, i + 1)) : 7
