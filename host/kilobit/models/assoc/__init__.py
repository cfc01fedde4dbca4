"""assoc: binary associative memory with product random sampling (Boukli Hacene et al., SiPS
2017), class-incremental; learns new classes online on the device. docs/contract.md section 9."""
# its public names, so that kilobit.models.assoc.NAME is the model's NAME
from kilobit.models.assoc.model import *  # noqa: F401,F403
