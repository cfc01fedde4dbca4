"""The protonn model."""
