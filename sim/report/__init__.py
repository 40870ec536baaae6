"""sim/report"""
