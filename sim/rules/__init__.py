"""sim/rules"""
