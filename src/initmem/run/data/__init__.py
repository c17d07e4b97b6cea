"""CIFAR-10 on the device: find, decode once, split, normalise, batch and augment; one module per step, each
importing only the ones before it (this package re-exports none: import each name from its module). The book's
Setup chapter describes the data and its split.

* :mod:`~initmem.run.data.sources` -- where the data is (:func:`~initmem.run.data.sources.find_cifar10`,
  :func:`~initmem.run.data.sources.download_cifar10`) and :class:`~initmem.run.data.sources.DataError`, the one error
  of the data layer;
* :mod:`~initmem.run.data.decode` -- :func:`~initmem.run.data.decode.load_cifar10`: torchvision's batches (an
  unpickler that builds only arrays), an image folder or its ``.tar.gz``, decoded once into uint8 arrays and cached;
* :mod:`~initmem.run.data.synthetic` -- :func:`~initmem.run.data.synthetic.synthetic_cifar`, a learnable stand-in;
* :mod:`~initmem.run.data.batches` -- :class:`~initmem.run.data.batches.DeviceDataset` and the batches of an epoch;
* :mod:`~initmem.run.data.prepare` -- the class-balanced split, a run's :class:`~initmem.run.data.prepare.PreparedData`
  (:func:`~initmem.run.data.prepare.prepare_data`) and tensors for your own model (:func:`~initmem.run.data.prepare.cifar10_tensors`).
"""
