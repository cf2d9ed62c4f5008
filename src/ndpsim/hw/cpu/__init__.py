"""CPU cores: the out-of-order and in-order timing models that run CPU threads' streams."""
