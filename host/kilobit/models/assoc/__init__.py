"""assoc: binary associative memory with product random sampling (Boukli Hacene et al., SiPS
2017), class-incremental; learns new classes online on the device. docs/contract.md section 9."""
