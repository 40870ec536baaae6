"""`@njit` kernels: pure functions of state arrays and table values, no I/O."""
