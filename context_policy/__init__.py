"""Context policy: turn and step boundaries, and which earlier reasoning each family keeps."""
