"""rkp: the Random Kernel Perceptron (Djuric & Vucetic 2010), fixed-point kernel weights and
random budget removal; learns online on every device. docs/contract.md sections 1-5."""
# its public names, so that kilobit.models.rkp.NAME is the model's NAME
from kilobit.models.rkp.model import *  # noqa: F401,F403
