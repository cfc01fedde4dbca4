/*
 * test_echo: harness self-test firmware for kb_sim (ATtiny2313 and ATmega328P).
 *
 * Protocol: every byte received is answered with byte + 1; 0xFF ends the run
 * (cli; sleep -> simavr state cpu_Done). Markers written to GPIOR1:
 *   1  after the UART is set up
 *   3  a byte has been received; 4  after a fixed, data-independent computation
 *      (so the 3 -> 4 cycle count is the same for every byte and every run)
 *   2  after the answer has been handed to the UART
 *   5  0xFF received, about to stop
 */
#include <avr/interrupt.h>
#include <avr/io.h>
#include <avr/sleep.h>
#include <stdint.h>

#ifndef F_CPU
#error "F_CPU must be defined"
#endif
#ifndef BAUD
#define BAUD 250000UL /* exact at 4 MHz and 16 MHz with U2X */
#endif
#include <util/setbaud.h>

#if defined(UDR0) /* ATmega328P */
#define K_UDR UDR0
#define K_UCSRA UCSR0A
#define K_UCSRB UCSR0B
#define K_UCSRC UCSR0C
#define K_UBRRH UBRR0H
#define K_UBRRL UBRR0L
#define K_RXC RXC0
#define K_UDRE UDRE0
#define K_U2X U2X0
#define K_RXEN RXEN0
#define K_TXEN TXEN0
#define K_UCSZ0 UCSZ00
#define K_UCSZ1 UCSZ01
#else /* ATtiny2313 */
#define K_UDR UDR
#define K_UCSRA UCSRA
#define K_UCSRB UCSRB
#define K_UCSRC UCSRC
#define K_UBRRH UBRRH
#define K_UBRRL UBRRL
#define K_RXC RXC
#define K_UDRE UDRE
#define K_U2X U2X
#define K_RXEN RXEN
#define K_TXEN TXEN
#define K_UCSZ0 UCSZ0
#define K_UCSZ1 UCSZ1
#endif

#define MARK(v) (GPIOR1 = (v))

volatile uint16_t g_sink; /* keeps the fixed computation alive (and gives .bss a byte or two) */

static void uart_init(void)
{
	K_UBRRH = UBRRH_VALUE;
	K_UBRRL = UBRRL_VALUE;
#if USE_2X
	K_UCSRA = (uint8_t)(1 << K_U2X);
#else
	K_UCSRA = 0;
#endif
	K_UCSRC = (uint8_t)((1 << K_UCSZ1) | (1 << K_UCSZ0)); /* 8N1 */
	K_UCSRB = (uint8_t)((1 << K_RXEN) | (1 << K_TXEN));
}

static uint8_t uart_getc(void)
{
	while (!(K_UCSRA & (1 << K_RXC)))
		;
	return K_UDR;
}

static void uart_putc(uint8_t c)
{
	while (!(K_UCSRA & (1 << K_UDRE)))
		;
	K_UDR = c;
}

/* Same instructions whatever c is: constant shifts and xors, fixed trip count. */
static __attribute__((noinline)) uint8_t transform(uint8_t c)
{
	uint16_t acc = c;
	uint8_t i;
	for (i = 0; i < 8; i++)
		acc = (uint16_t)((acc << 1) ^ (acc >> 3) ^ i);
	g_sink = acc;
	return (uint8_t)(c + 1);
}

int main(void)
{
	uart_init();
	MARK(1);
	for (;;) {
		uint8_t c = uart_getc();
		if (c == 0xFF)
			break;
		MARK(3);
		c = transform(c);
		MARK(4);
		uart_putc(c);
		MARK(2);
	}
	MARK(5);
	cli();
	sleep_enable();
	sleep_cpu();
	for (;;)
		;
}
