"""kilobit's AVR firmwares: built with avr-gcc (firmware), run cycle-exact under simavr (kb_sim),
spoken to over their UART (protocol; one dialog per firmware kind: fw_learner, fw_predict,
fw_assoc); the runtimes attiny2313-sim and uno-sim (sim_runtimes); mutated frames (framefuzz)
and power cuts during EEPROM checkpoints (powercut)."""
