"""Design studies on a model: parameters of the model file varied (sweep), optimised
(optimize) or a motion's loads summed up per input (envelope), on one core, several
(joblib) or a Dask cluster."""
from .evaluation import DesignProblem, Outcome
from .kinds import EnvelopeRow, Optimum, SweepResult, envelope, optimize, sensitivity, sweep
from .parameters import Parameter, parse_path
from .runner import Runner
from .study_file import Study, StudyError, read_study

__all__ = ["DesignProblem", "Outcome", "EnvelopeRow", "Optimum", "SweepResult", "envelope",
           "optimize", "sensitivity", "sweep", "Parameter", "parse_path", "Runner", "Study",
           "StudyError", "read_study"]
