#!/usr/bin/env python3
"""Validates flashinfer-bench Trace lines (JSONL) with pydantic models transcribed from
flashinfer-bench (flashinfer-ai/flashinfer-bench: flashinfer_bench/data/trace.py, workload.py,
utils.py), for checking `kiln runs export --format flashinfer-trace` where pydantic is installed:

    kiln runs export > traces.jsonl && python3 tests/tools/validate_flashinfer_traces.py traces.jsonl

Exits 0 when every non-empty line validates (as TraceSet.from_path reads traces/*.jsonl: one
Trace.model_validate_json per line), 1 naming the first bad line otherwise. Optional: the C++
tests (tests/unit/model/flashinfer_trace_schema.h) are the ones CI runs.
"""
import math
import sys
from enum import Enum
from typing import Annotated, Any, Dict, List, Optional, Union, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

NonEmptyString = Annotated[str, Field(min_length=1)]
NonNegativeInt = Annotated[int, Field(ge=0)]


class Base(BaseModel):
    # flashinfer-bench's BaseModelWithDocstrings sets no `extra`: pydantic ignores unknown keys.
    # Forbidding them here also catches kiln data leaking into an export.
    model_config = ConfigDict(extra="forbid")


class RandomInput(Base):
    type: Literal["random"] = "random"


class ScalarInput(Base):
    type: Literal["scalar"] = "scalar"
    value: Union[int, float, bool]


class SafetensorsInput(Base):
    type: Literal["safetensors"] = "safetensors"
    path: NonEmptyString
    tensor_key: NonEmptyString


class Workload(Base):
    axes: Dict[str, NonNegativeInt]
    inputs: Dict[str, Union[RandomInput, SafetensorsInput, ScalarInput]]
    uuid: NonEmptyString


class Correctness(Base):
    model_config = ConfigDict(extra="forbid", ser_json_inf_nan="strings")
    max_relative_error: float = 0.0
    max_absolute_error: float = 0.0
    extra: Optional[Dict[str, Any]] = None

    @field_validator("max_relative_error", "max_absolute_error")
    @classmethod
    def non_negative_or_nan(cls, v: float):
        if math.isnan(v):
            return v
        if v < 0:
            raise ValueError("must be non-negative or NaN")
        return v


class Performance(Base):
    latency_ms: float = Field(default=0.0, ge=0.0)
    reference_latency_ms: float = Field(default=0.0, ge=0.0)
    speedup_factor: float = Field(default=0.0, ge=0.0)
    profile: Optional[List[Dict[str, Any]]] = None


class Environment(Base):
    hardware: NonEmptyString
    libs: Dict[str, str] = Field(default_factory=dict)


class EvaluationStatus(str, Enum):
    PASSED = "PASSED"
    INCORRECT_SHAPE = "INCORRECT_SHAPE"
    INCORRECT_NUMERICAL = "INCORRECT_NUMERICAL"
    INCORRECT_DTYPE = "INCORRECT_DTYPE"
    RUNTIME_ERROR = "RUNTIME_ERROR"
    COMPILE_ERROR = "COMPILE_ERROR"
    TIMEOUT = "TIMEOUT"


class Evaluation(Base):
    status: EvaluationStatus
    environment: Environment
    timestamp: NonEmptyString
    log: str = ""
    correctness: Optional[Correctness] = None
    performance: Optional[Performance] = None

    @model_validator(mode="after")
    def _status_metrics(self):
        wants_c = self.status in (EvaluationStatus.PASSED, EvaluationStatus.INCORRECT_NUMERICAL)
        wants_p = self.status == EvaluationStatus.PASSED
        if (self.correctness is not None) != wants_c:
            raise ValueError(f"correctness {'required' if wants_c else 'not allowed'} for {self.status}")
        if (self.performance is not None) != wants_p:
            raise ValueError(f"performance {'required' if wants_p else 'not allowed'} for {self.status}")
        return self


class Trace(Base):
    definition: NonEmptyString
    workload: Workload
    solution: Optional[str] = None
    evaluation: Optional[Evaluation] = None


def main(argv):
    if len(argv) != 2:
        print(f"usage: {argv[0]} TRACES.jsonl  (- for stdin)", file=sys.stderr)
        return 2
    stream = sys.stdin if argv[1] == "-" else open(argv[1], encoding="utf-8")
    count = 0
    for number, line in enumerate(stream, 1):
        line = line.strip()
        if not line:
            continue
        try:
            trace = Trace.model_validate_json(line)
        except ValidationError as e:
            print(f"{argv[1]}:{number}: not a flashinfer-bench Trace:\n{e}", file=sys.stderr)
            return 1
        if trace.solution is None and trace.evaluation is None:
            print(f"{argv[1]}:{number}: a workload trace, not an evaluation", file=sys.stderr)
            return 1
        count += 1
    print(f"{count} traces valid")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
