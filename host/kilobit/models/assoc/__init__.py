"""The assoc model."""
