"""mvmtools: minivmm's tools that outgrew shell (Python 3 standard library only).

Modules, each small and named for what it holds:
  results      read a results file (single run, --repeat, --compare); THE table-row rule
  stats        the type-7 quantile, spreads, grouped statistics and paired ratios
  numtext      numbers as awk, C printf and jq print them (for byte-exact reports)
  design       run orders: ABBA and Williams designs
  environment  the environment record: grouping key, KVM paging parameters, markdown
  gnuplot      running gnuplot (the renderer) on a script
  sweeptable   the guest-vs-host touch-loop tables of bench/sweep-vs-host
  peers        the markdown report of a bench/peers run
  merge        many results files into one CSV, a grouped table and plots
  plot         the data side of scripts/plot
  labcheck     make lab-check: the lab's commands and answers
  rigcheck     the rigs' verdicts on their cases (tests/rig/check)
Run as `python3 -m mvmtools COMMAND ...` (PYTHONPATH=scripts) for shell glue;
see `python3 -m mvmtools --help`.
"""
