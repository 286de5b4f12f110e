"""flashinfer-bench issue #414 (a CUDA-graph capture that replays stale outputs), as a
flashinfer-bench Python solution of the flashinfer-trace definition rmsnorm_h128.

In the issue a solution wrapped a Triton "anchor" kernel and a CuTe-DSL kernel in
torch.cuda.graph. CuTe-DSL launches do not take part in stream capture: the CuTe kernel ran once,
immediately, inside the `with torch.cuda.graph(g):` block, and was not recorded, so every
g.replay() ran the anchor alone. flashinfer-bench timed the same input tensors on every
iteration, so the output buffer kept the one-time result, correctness passed, and CUPTI timed the
anchor only.

This solution has the same behaviour with torch alone: on the first call for a set of tensors it
computes the RMSNorm eagerly (the unrecorded launch) and captures a graph holding only the anchor
(an increment of a one-element scratch tensor); every later call on those tensors replays the
graph and nothing else.
"""
import torch

_graphs = {}


def _rmsnorm(hidden_states, weight):
    x = hidden_states.to(torch.float32)
    inv_rms = torch.rsqrt(x.pow(2).mean(dim=-1, keepdim=True) + 1e-6)
    return ((x * inv_rms) * weight.to(torch.float32)).to(hidden_states.dtype)


@torch.no_grad()
def run(hidden_states, weight, output):
    key = (hidden_states.data_ptr(), weight.data_ptr(), output.data_ptr(),
           tuple(hidden_states.shape))
    entry = _graphs.get(key)
    if entry is None:
        # The CuTe-DSL kernel of the issue: it runs now, once, and is not part of the graph.
        output.copy_(_rmsnorm(hidden_states, weight))
        scratch = torch.zeros(1, device=output.device)
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            scratch.add_(1)  # warm the anchor up off the capture, as torch asks
        torch.cuda.current_stream().wait_stream(side)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            scratch.add_(1)  # the anchor: the only work recorded
        _graphs[key] = (graph, scratch)
        return
    entry[0].replay()
