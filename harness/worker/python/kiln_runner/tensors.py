"""kiln's buffers seen as torch tensors (no copy)."""

import ctypes

from kiln_runner.abi import DTYPES


class _DeviceBytes:
    """A CUDA allocation of kiln's seen as bytes by torch.as_tensor (zero copy)."""

    def __init__(self, ptr, nbytes):
        self.__cuda_array_interface__ = {
            "shape": (nbytes,), "typestr": "|u1", "data": (ptr, False), "version": 3,
            "strides": None, "stream": None,  # kiln orders all work on its own stream
        }


def _itemsize(torch, dtype):
    return torch.empty((), dtype=dtype).element_size()


def _byte_span(torch, t):
    """[start, end) of the memory a tensor's storage occupies."""
    storage = t.untyped_storage() if hasattr(t, "untyped_storage") else t.storage()
    start = storage.data_ptr()
    return start, start + storage.nbytes()


class TensorViews:
    """kiln's buffers as torch tensors, cached per (pointer, dtype, shape)."""

    def __init__(self, torch, device):
        self.torch = torch
        self.device = device
        self.cache = {}
        self.torch_dtypes = {}
        for name in DTYPES:
            t = {"float4_e2m1": "float4_e2m1fn_x2"}.get(name, name)
            self.torch_dtypes[name] = getattr(torch, t, None)

    def __call__(self, t, tensor=False):
        dtype = DTYPES[t.dtype]
        shape = tuple(t.shape[i] for i in range(t.ndim))
        if t.ndim == 0 and not tensor:  # a scalar: host memory, passed as a Python number
            ctype = {"float32": ctypes.c_float, "float64": ctypes.c_double,
                     "int64": ctypes.c_int64, "int32": ctypes.c_int32,
                     "int16": ctypes.c_int16, "int8": ctypes.c_int8,
                     "bool": ctypes.c_bool}.get(dtype)
            if ctype is None:
                raise TypeError(f"scalar of dtype {dtype} is not supported by the runner")
            return ctypes.cast(t.data, ctypes.POINTER(ctype))[0]
        key = (t.data, dtype, shape)
        v = self.cache.get(key)
        if v is not None:
            return v
        torch = self.torch
        torch_dtype = self.torch_dtypes[dtype]
        if torch_dtype is None:
            raise TypeError(f"this torch has no dtype for {dtype}")
        numel = 1
        for d in shape:
            numel *= d
        if dtype == "float4_e2m1":  # two per byte; torch's packed type holds a pair
            shape = shape[:-1] + (shape[-1] // 2,)
            numel //= 2
        if numel == 0:
            v = torch.empty(shape, dtype=torch_dtype, device=self.device)
        else:
            nbytes = numel * _itemsize(torch, torch_dtype)
            if self.device.type == "cuda":
                raw = torch.as_tensor(_DeviceBytes(t.data, nbytes), device=self.device)
            else:  # host memory of kiln's; frombuffer shares it
                raw = torch.frombuffer((ctypes.c_uint8 * nbytes).from_address(t.data),
                                       dtype=torch.uint8)
            v = raw.view(torch_dtype).view(shape)
        self.cache[key] = v
        return v
