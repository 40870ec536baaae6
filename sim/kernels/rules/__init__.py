"""sim/kernels/rules"""
