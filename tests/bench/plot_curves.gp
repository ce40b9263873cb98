# Tuning curves of docs/bench/*.csv (written by bench_tuning): best latency
# against trials and against wall time, evolutionary + xgb vs random search.
#   gnuplot tests/bench/plot_curves.gp   (from the repository root)
set datafile separator ","
set terminal pngcairo noenhanced size 1200,800 font "sans,10"
set output "docs/bench/tuning_curves.png"
set multiplot layout 2,2 title "Tessel: best latency found (lower is better), 2-core build machine"
set key top right
set grid
evo(f) = sprintf("< grep '^evolutionary' %s", f)
rnd(f) = sprintf("< grep '^random' %s", f)
do for [case in "matmul_1024 conv_128_28"] {
  f = "docs/bench/".case.".csv"
  set title case." vs trials"
  set xlabel "trials"
  set ylabel "best ms"
  plot evo(f) using 2:3 with linespoints title "evolutionary + xgb", rnd(f) using 2:3 with linespoints title "random"
  set title case." vs wall time"
  set xlabel "seconds"
  plot evo(f) using 4:3 with linespoints title "evolutionary + xgb", rnd(f) using 4:3 with linespoints title "random"
}
unset multiplot
