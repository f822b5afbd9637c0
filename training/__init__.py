"""The training machinery every trainer shares (the tracker's, the oracle's): settings with their
help and click options, the one loop, checkpoints and the one restore path, run logs, devices,
grids of runs and their cluster tasks, figure styles."""
