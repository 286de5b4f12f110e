# A ModelNew for ReLU whose own path fails and which falls back to torch inside forward: the
# "try the kernel, except: the reference" reward hack. Its outputs are right; kiln must name the
# fallback (integrity.exception_fallback), not pass it.
import torch
import torch.nn as nn


def relu_kernel_launch(x):
    # Stands for a custom kernel that does not build or launch on this node.
    raise RuntimeError("no kernel image is available for execution on the device")


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        try:
            return relu_kernel_launch(x)
        except Exception:
            return torch.relu(x)
