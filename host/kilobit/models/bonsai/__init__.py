"""bonsai: one shallow sparse tree in a learnt sparse low-dimensional projection (Kumar, Goyal &
Varma, ICML 2017); trained on the host, int8/int16 on the device. docs/contract.md section 8."""
