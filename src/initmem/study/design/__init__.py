"""The study's design: which experiments run, with which parameters, at which preset, and where their results go.

The experiments' records (:mod:`initmem.study.experiments`) go in; out come each notebook's parameters at a preset and
the sweep they build:

* :mod:`~initmem.study.design.presets` (open it first) -- the parameters of every notebook at each hardware budget;
* :mod:`~initmem.study.design.registry` -- each experiment's sweep spec from its notebook's parameters;
* :mod:`~initmem.study.design.preset_notes` -- the choices the paper does not state, and why each was made;
* :mod:`~initmem.study.design.layout` -- where a preset's results live.

It may import :mod:`initmem.study.experiments` (and base, run, sweeps), nothing else of the study.
"""
