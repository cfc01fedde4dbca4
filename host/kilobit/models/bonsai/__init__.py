"""The bonsai model."""
