"""protonn: a learnt sparse projection and a few prototypes with RBF scores (Gupta et al., ICML
2017); trained on the host, int8/int16 on the device. docs/contract.md section 10."""
# its public names, so that kilobit.models.protonn.NAME is the model's NAME
from kilobit.models.protonn.model import *  # noqa: F401,F403
