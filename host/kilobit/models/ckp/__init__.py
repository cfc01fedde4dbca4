"""The ckp model."""
