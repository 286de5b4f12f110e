import torch

EPS = 1e-5


def run(hidden_states, weight, output):
    x = hidden_states.float()
    y = x * torch.rsqrt(x.square().mean(dim=-1, keepdim=True) + EPS) * weight.float()
    output.copy_(y.to(hidden_states.dtype))
