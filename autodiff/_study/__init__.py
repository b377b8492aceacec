"""autodiff._study.trace"""
