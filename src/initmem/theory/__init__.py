"""Toy models and exact laws behind the theory chapters (notebooks ``T1`` ... ``T7``, the book's Theory part).

numpy (scipy where a solver is needed), float64, seconds on a laptop CPU. It may import :mod:`initmem.base` only; its
independent BatchNorm check imports torch inside the function. Each name lives in one module, imported from there
(``from initmem.theory import optimizers``, then ``optimizers.sgd``):

- :mod:`~initmem.theory.helpers`: schedules, clocks, minibatch indices, slopes;
- :mod:`~initmem.theory.toys`: the normalized logistic and softmax toys and a linear loss;
- :mod:`~initmem.theory.optimizers`: SGD, Adam, AdamW, Muon and Newton-Schulz on batches of runs, and their laws;
- :mod:`~initmem.theory.diagonal` (the diagonal linear network), :mod:`~initmem.theory.backward_error` (the modified
  flows), :mod:`~initmem.theory.checks` (finite differences and a PyTorch BatchNorm MLP, independent of the toys).

Conventions: runs carry a leading axis ``R`` (parameters ``(R, d)`` or ``(R, k, d)``) and share the minibatch
sequence; ``eta`` is the learning rate per step (a float or a ``(steps,)`` schedule), ``b`` the batch size, ``lam`` the
decay per unit learning rate (as in PyTorch); ``sigma`` scales a fixed N(0, 1/fan_in) direction, so ``||w_0|| ~= sigma``.
"""
