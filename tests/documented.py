"""The exploration the book documents (book/reproduce.md, "Explorations build on the record"), which two tests run: a
subset of the cpu record's grid of 04, so it trains nothing, and the line it prints first."""

#: ``initmem experiments --preset cpu --only 04 -p batch_sizes "[64, 256]"``, as arguments after ``initmem``.
EXPLORATION = ["experiments", "--preset", "cpu", "--only", "04", "-p", "batch_sizes", "[64, 256]"]
#: What it prints before anything runs: every run of the subset is in the record.
EXPLORATION_REUSE = "04_batch_size: 24 runs: 24 reused from the record, 0 in its own cache, 0 to train"
