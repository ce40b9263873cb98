# Cold against warm tuning (tests/bench/warm_start_curve.sh's CSV files): each
# model's run time against trials, both sides, LibTorch in the same runs.
#   gnuplot -e "files='/tmp/ws/r18/resnet18.csv /tmp/ws/sq/squeezenet1_1.csv'; out='docs/images/warm-start.png'" \
#     tests/bench/plot_warm_start.gp
set datafile separator ","
if (!exists("out")) out = "warm-start.png"
set terminal pngcairo noenhanced size 1200,450 font "sans,10"
set output out
n = words(files)
set multiplot layout 1,n title "Tessel: tuned model run time against trials, cold and warm (two-core AMD EPYC, AVX-512; lower is better)"
set key top right
set grid
set logscale x
set xrange [80:4000]
set xlabel "trials measured"
set ylabel "ms (tessel run: mean of two medians)"
do for [i=1:n] {
  f = word(files, i)
  name = system("basename ".f." .csv")
  set title name
  cold = sprintf("< grep '^cold' %s", f)
  warm = sprintf("< grep '^warm' %s", f)
  plot cold using 3:(($5+$6)/2) with linespoints pt 7 title "cold", \
       warm using 3:(($5+$6)/2) with linespoints pt 5 title "warm (knowledge base)", \
       cold using 3:4 with lines dt 3 lc rgb "purple" title "cold: estimate", \
       warm using 3:4 with lines dt 3 lc rgb "dark-green" title "warm: estimate", \
       warm using 3:(($7+$8)/2) with lines dt 2 lc rgb "gray40" title "LibTorch"
}
unset multiplot
