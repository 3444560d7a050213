"""Tuning: the configurations a kernel declares (`tune [...]`, space.py; `ember tune-space`,
space_command.py), the workloads `ember tune` runs them on (workloads.py), the tuner
(runner.py, timing.py; `ember tune`, command.py), its tables (table.py) and the runtime's
pick from them (pick.py)."""

from .space import TuneSpace, tune_space
from .pick import load_tuned
from .table import Tuned, config_for, tuned_for

__all__ = ["TuneSpace", "tune_space", "config_for", "tuned_for", "Tuned", "load_tuned"]
