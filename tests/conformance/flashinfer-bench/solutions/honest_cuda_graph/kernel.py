"""The honest counterpart of flashinfer-bench issue #414: a CUDA graph that records the whole
computation, captured once per set of tensors (input and output addresses) and replayed on every
call, the first included. Replays read the inputs' current values and write the output, so they
compute what an eager call would; kiln must PASS it.
"""
import torch

_graphs = {}


def _rmsnorm_into(hidden_states, weight, output):
    x = hidden_states.to(torch.float32)
    inv_rms = torch.rsqrt(x.pow(2).mean(dim=-1, keepdim=True) + 1e-6)
    output.copy_(((x * inv_rms) * weight.to(torch.float32)).to(hidden_states.dtype))


@torch.no_grad()
def run(hidden_states, weight, output):
    key = (hidden_states.data_ptr(), weight.data_ptr(), output.data_ptr(),
           tuple(hidden_states.shape))
    graph = _graphs.get(key)
    if graph is None:
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            _rmsnorm_into(hidden_states, weight, output)  # warm-up off the capture
        torch.cuda.current_stream().wait_stream(side)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            _rmsnorm_into(hidden_states, weight, output)
        _graphs[key] = graph
    graph.replay()
