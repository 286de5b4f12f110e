"""flashinfer-bench issue #414 (a CUDA-graph capture that replays stale outputs), written so that
it runs on any device, against kiln's built-in rmsnorm_h2048.

A CUDA graph is a recorded sequence of launches replayed later. In the issue the expensive kernel
ran once while the graph was being captured but was not recorded, so every replay ran only a
cheap anchor kernel and the output kept the first call's result. Here a "graph" is a list of
recorded closures: on the first call for a set of tensors the RMSNorm runs once, outside the
recording, and only the anchor (an increment of a scratch tensor) is recorded; every later call on
those tensors replays the recording and nothing else. issue414_graph_stale_outputs is the same
with torch.cuda.graph on a GPU.
"""
import torch

_recordings = {}


def _rmsnorm(hidden_states, weight):
    x = hidden_states.to(torch.float32)
    inv_rms = torch.rsqrt(x.pow(2).mean(dim=-1, keepdim=True) + 1e-6)
    return ((x * inv_rms) * weight.to(torch.float32)).to(hidden_states.dtype)


@torch.no_grad()
def run(hidden_states, weight, output):
    key = (hidden_states.data_ptr(), weight.data_ptr(), output.data_ptr(),
           tuple(hidden_states.shape))
    recording = _recordings.get(key)
    if recording is None:
        output.copy_(_rmsnorm(hidden_states, weight))  # runs once, not recorded
        scratch = torch.zeros(1, device=output.device)
        _recordings[key] = [lambda: scratch.add_(1)]   # the anchor: all that is replayed
        return
    for launch in recording:
        launch()
