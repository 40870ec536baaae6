"""sim/kernels/world"""
