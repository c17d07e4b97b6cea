"""The study: the paper's experiments, their presets, results, statistics, verdicts and figures.

* :mod:`~initmem.study.presets` -- the smoke, cpu, gpu and paper presets (the parameters of every notebook);
* :mod:`~initmem.study.preset_notes` -- the choices the paper does not state, with their reasons;
* :mod:`~initmem.study.registry` -- the one experiment registry: each experiment's sweep from its parameters;
* :mod:`~initmem.study.costs` -- what a preset costs, estimated from throughput and measured from run files;
* :mod:`~initmem.study.results` -- load-or-run an experiment and where its results live;
* :mod:`~initmem.study.timed` -- an experiment within a wall-time budget (the GPU check);
* :mod:`~initmem.study.reuse` -- what an exploration takes from the committed record: its runs, and its results;
* :mod:`~initmem.study.stats` -- the statistics vocabulary (seed mean, interval, spread, rank correlation);
* :mod:`~initmem.study.summary` -- the summary table of a sweep;
* :mod:`~initmem.study.analysis` -- the analyses of the chapters (horizons, norm coupling, clocks, calibration);
* :mod:`~initmem.study.claims` -- the claims ledger C1-C7 and its verdict rules;
* :mod:`~initmem.study.plots` -- the figures (style, labels, captions, seeds, figures, spreads, the record's
  overlay), with :mod:`~initmem.study.batch_plots`, :mod:`~initmem.study.phase_plots` and
  :mod:`~initmem.study.forest`;
* :mod:`~initmem.study.gpu_results` -- the paper-scale (GPU) column of the ledger.

It may import :mod:`initmem.base`, :mod:`initmem.run` and :mod:`initmem.sweeps`, never :mod:`initmem.theory` or
:mod:`initmem.book.build`. Analysing committed results needs no torch: from ``run`` it imports only the torch-free
:mod:`~initmem.run.config`, :mod:`~initmem.run.thresholds` and :mod:`~initmem.run.variables` at module level
(``tests/test_architecture.py`` checks it); training a missing run imports the trainer when it is called.
"""
