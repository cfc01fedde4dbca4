"""bonsai: one shallow sparse tree in a learnt sparse low-dimensional projection (Kumar, Goyal &
Varma, ICML 2017); trained on the host, int8/int16 on the device. docs/contract.md section 8."""
# its public names, so that kilobit.models.bonsai.NAME is the model's NAME
from kilobit.models.bonsai.model import *  # noqa: F401,F403
