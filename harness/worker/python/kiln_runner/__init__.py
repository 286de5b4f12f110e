"""kiln's Python runner, one module per concept (kiln_python_runner.py runs it)."""
