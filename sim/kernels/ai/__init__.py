"""sim/kernels/ai"""
