"""Program statements of the register machines certified by the real Lean binary.

- ``library``: the programs library (``lake/Programs.lean``), compiled and audited per Lean build
  (``build_programs``); ``ProgramsLibrary.library_hash`` combines its hash with the core
  library's (``library_hash``) and is the ``core_hash`` of a certificate store for program
  statements.
- ``render``: Lean theorems from the program AST only: a step, a trace, an equivalence from one
  start state or, on Bits, from every start state.
- ``questions``: ``StepQuestion``, ``RunQuestion``, ``TraceQuestion`` (``trace_questions`` cuts a long trace into
  chunks), ``EquivalenceQuestion``: one theorem each, with its kind, text and store key.
- ``check``: questions answered many to a Lean file with positive confirmation
  (``check_programs``), over ``jobs`` processes here or, given an executor, as tasks on a Ray
  cluster (``leanbridge.cluster.RayProgramsExecutor``).

Verdicts are ``leanbridge.verdicts`` values: ``Complete`` (certified) or ``Rejected`` (Lean's
error class and message); a Lean that cannot be found, crashes or times out raises.
"""
from leanbridge.programs.check import CheckConfig, Executor, LocalExecutor, answer_statements, check_programs
from leanbridge.programs.library import ProgramsLibrary, ProgramsLibraryError, build_programs, library_hash
from leanbridge.programs.questions import (TRACE_CHUNK, EquivalenceQuestion, ProgramQuestion, RunQuestion,
                                           StepQuestion, TraceQuestion, equivalence_form, trace_questions)

__all__ = ["CheckConfig", "EquivalenceQuestion", "Executor", "LocalExecutor", "ProgramQuestion", "ProgramsLibrary",
           "ProgramsLibraryError", "RunQuestion", "StepQuestion", "TRACE_CHUNK", "TraceQuestion", "answer_statements",
           "build_programs", "check_programs", "equivalence_form", "library_hash", "trace_questions"]
