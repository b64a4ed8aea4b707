"""Jobs sharing GPUs: packing interference."""
