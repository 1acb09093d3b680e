"""evalbridge.reports"""
