"""
CONTROL: Wrong kernel (fills output with zeros). Should FAIL correctness checks.
"""

def kernel(output, inp):
    output.zero_()
