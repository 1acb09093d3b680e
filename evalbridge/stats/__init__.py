"""evalbridge.stats"""
