"""evalbridge.metrics.reference"""
