"""sim/outputs"""
