"""ckp: the Compressed Kernel Perceptron (Vucetic, Coric & Wang 2009), a budget of L bits
shared between support vectors and their precision; learns online on every device.
docs/contract.md section 6."""
# its public names, so that kilobit.models.ckp.NAME is the model's NAME
from kilobit.models.ckp.model import *  # noqa: F401,F403
