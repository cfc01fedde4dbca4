"""The model types."""
