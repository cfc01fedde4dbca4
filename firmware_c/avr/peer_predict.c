/*
 * peer_predict.c - the Uno harness in which `kilobit bench peers` (host/kilobit/bench/peers.py)
 * runs another library's classifier: C that library generated (emlearn, pinned, installed as a
 * bench-only extra), never part of kilobit. Each input's features arrive over the UART into
 * RAM, all of them (the peer's API takes the whole vector), then one prediction between the
 * cycle markers 3 and 4 (what kb_sim counts, as for kilobit's firmware), and the class goes
 * back as one byte.
 *
 *   -DPEER_MODEL="model.h"   the generated code        -DPEER_NFEAT=n   features
 *   -DPEER_FEATURE=int16_t | float                     -DPEER_PREDICT=name_predict
 *   -DPEER_NONE              no model: the baseline whose flash and RAM the bench subtracts
 */
#include <avr/io.h>
#include <stdint.h>

#ifndef PEER_NONE
#include PEER_MODEL
#endif

static PEER_FEATURE x[PEER_NFEAT];

static uint8_t rx(void)
{
    while (!(UCSR0A & (1 << RXC0)))
        ;
    return UDR0;
}

static void tx(uint8_t b)
{
    while (!(UCSR0A & (1 << UDRE0)))
        ;
    UDR0 = b;
}

int main(void)
{
    /* 250000 baud at 16 MHz: U2X, UBRR 7 (kilobit's firmware runs the same line) */
    UCSR0A = (uint8_t)(1 << U2X0);
    UBRR0H = 0;
    UBRR0L = 7;
    UCSR0B = (uint8_t)((1 << RXEN0) | (1 << TXEN0));
    UCSR0C = (uint8_t)((1 << UCSZ01) | (1 << UCSZ00));
    for (;;) {
        uint16_t i;
        uint8_t k, y;
        for (i = 0; i < PEER_NFEAT; i++) {
            uint8_t *b = (uint8_t *)&x[i];
            for (k = 0; k < sizeof x[0]; k++)
                b[k] = rx();
        }
        GPIOR1 = 3;
        __asm__ __volatile__("" ::: "memory");
#ifdef PEER_NONE
        y = (uint8_t)(((const uint8_t *)x)[0] ^ ((const uint8_t *)x)[sizeof x - 1]);
#else
        y = (uint8_t)PEER_PREDICT(x, PEER_NFEAT);
#endif
        __asm__ __volatile__("" ::: "memory");
        GPIOR1 = 4;
        tx(y);
    }
}
