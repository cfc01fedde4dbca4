/*
 * peer_ref.c - the host reference of a peer library's classifier for `kilobit bench peers`
 * (host/kilobit/bench/peers.py): the same generated C as firmware_c/avr/peer_predict.c runs on
 * the Uno, compiled for the host. Reads rows of PEER_NFEAT features (PEER_FEATURE, native byte
 * order, as the bench writes them) from stdin until it ends and writes one byte, the class, per
 * row. (emlearn's own Python wrapper reads CSV lines of at most 2 KB and 256 values: too short
 * for the larger inputs here.)
 *
 *   -DPEER_MODEL="model.h" -DPEER_NFEAT=n -DPEER_FEATURE=int16_t|float -DPEER_PREDICT=name
 */
#include <stdint.h>
#include <stdio.h>

#include PEER_MODEL

static PEER_FEATURE x[PEER_NFEAT];

int main(void)
{
    while (fread(x, sizeof x[0], PEER_NFEAT, stdin) == PEER_NFEAT) {
        const int y = (int)PEER_PREDICT(x, PEER_NFEAT);
        if (putchar((unsigned char)y) == EOF)
            return 1;
    }
    return 0;
}
