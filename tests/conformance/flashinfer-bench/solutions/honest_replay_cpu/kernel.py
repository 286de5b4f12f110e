"""The honest counterpart of issue414_replay_stale_outputs_cpu: the recording (a list of closures
standing in for a CUDA graph) holds the whole computation, captured once per set of tensors and
replayed on every call, the first included. kiln must PASS it.
"""
import torch

_recordings = {}


def _rmsnorm_into(hidden_states, weight, output):
    x = hidden_states.to(torch.float32)
    inv_rms = torch.rsqrt(x.pow(2).mean(dim=-1, keepdim=True) + 1e-6)
    output.copy_(((x * inv_rms) * weight.to(torch.float32)).to(hidden_states.dtype))


@torch.no_grad()
def run(hidden_states, weight, output):
    key = (hidden_states.data_ptr(), weight.data_ptr(), output.data_ptr(),
           tuple(hidden_states.shape))
    recording = _recordings.get(key)
    if recording is None:
        recording = _recordings[key] = [lambda: _rmsnorm_into(hidden_states, weight, output)]
    for launch in recording:
        launch()
