"""sim/world"""
