"""The verdicts: the paper's claims judged against this reproduction's results, by rules printed before the runs.

An experiment's combined Dataset goes in; out come the ledger's rows, each with its verdict and the reason for it:

* :mod:`~initmem.study.verdicts.claims` (open it first) -- the claims ledger: every claim's rows, the chapters' boxes;
* :mod:`~initmem.study.verdicts.judges` -- one judge per claim (B1's, :mod:`~initmem.study.verdicts.boundary_judge`,
  reads :mod:`~initmem.study.verdicts.phase` and :mod:`~initmem.study.verdicts.boundary`), on the vocabulary of
  :mod:`~initmem.study.verdicts.ledger` and the rules of :mod:`~initmem.study.verdicts.rules`;
* how often the rules err and what a design can decide: :mod:`~initmem.study.verdicts.error_rates`,
  :mod:`~initmem.study.verdicts.row_power`, :mod:`~initmem.study.verdicts.boundary_coverage`;
* beyond the record: :mod:`~initmem.study.verdicts.ladder` and :mod:`~initmem.study.verdicts.machine_control` (the
  scale ladder, its CPUs), :mod:`~initmem.study.verdicts.precision` (bf16), :mod:`~initmem.study.verdicts.replication`.

It may import :mod:`initmem.study.statistics`, :mod:`~initmem.study.experiments`, :mod:`~initmem.study.design` and
:mod:`~initmem.study.costs` (and base, run, sweeps), never :mod:`~initmem.study.presentation`.
"""
