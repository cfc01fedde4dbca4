"""The integer contract's shared pieces (docs/contract.md): errors, the generator, kernel tables,
fixed point, quantization, the model-file container, sparse matrices, the streamed projection,
the golden-file format. Imports nothing else of kilobit."""
