"""sim/engine"""
