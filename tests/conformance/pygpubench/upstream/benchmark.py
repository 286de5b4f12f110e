"""
Shared benchmark problem: RGB-to-grayscale conversion.
Used by all exploit tests.
"""
import torch


def generate_test_case(size, seed):
    """Generate a test case for the grayscale benchmark."""
    gen = torch.Generator(device="cuda")
    gen.manual_seed(seed)

    x = torch.rand(size, size, 3, device="cuda", dtype=torch.float32, generator=gen).contiguous()
    y = torch.empty(size, size, device="cuda", dtype=torch.float32).contiguous()

    weights = torch.tensor([0.2989, 0.5870, 0.1140], device="cuda", dtype=torch.float32)
    expected = torch.sum(x * weights, dim=-1).contiguous()

    return (y, x), (expected, 1e-6, 1e-6)
