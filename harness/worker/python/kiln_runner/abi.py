"""The ABI the worker core and the runner share: dtypes, return codes, ctypes structs."""

import ctypes


DTYPES = [  # kiln_dtype of harness/include/kiln/abi.h, in enum order
    "float32", "float16", "bfloat16", "float8_e4m3fn", "float8_e5m2", "float4_e2m1",
    "int64", "int32", "int16", "int8", "bool", "float64",
]
PACKAGE = "kiln_solution"  # the package a solution's sources are imported as

# Return codes of entry/collect understood by the core (harness/worker/evaluation.h).
FAILED, REJECTED, INCORRECT_SHAPE, INCORRECT_DTYPE = 1, 2, 3, 4


class KilnTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("dtype", ctypes.c_int), ("ndim", ctypes.c_int32),
                ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64))]


class KilnContext(ctypes.Structure):
    _fields_ = [("abi_version", ctypes.c_int32), ("backend", ctypes.c_int),
                ("stream", ctypes.c_void_p), ("device", ctypes.c_void_p),
                ("context", ctypes.c_void_p)]


ENTRY = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.POINTER(KilnTensor), ctypes.c_int32,
                         ctypes.POINTER(KilnContext))
FILL = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.POINTER(KilnTensor), ctypes.c_int32,
                        ctypes.POINTER(KilnContext), ctypes.c_uint64)


class Refusal(Exception):
    """A failure with the status the core reports for it (REJECTED, INCORRECT_SHAPE, ...)."""

    def __init__(self, code, message):
        super().__init__(message)
        self.code = code
