"""The rkp model."""
