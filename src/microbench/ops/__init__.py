"""Framework-independent op specs: parameters, FLOP/byte models, inputs, references."""
