"""ckp: the Compressed Kernel Perceptron (Vucetic, Coric & Wang 2009), a budget of L bits
shared between support vectors and their precision; learns online on every device.
docs/contract.md section 6."""
