"""sim/runner"""
