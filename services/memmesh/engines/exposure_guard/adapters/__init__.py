"""Adapters of the ExposureGuard: its SQL store and its peer engines."""
