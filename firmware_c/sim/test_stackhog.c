/*
 * test_stackhog: harness self-test firmware for kb_sim's stack checks.
 *
 * Reads one byte n from the UART, recurses n levels deep (each level keeps a
 * few bytes of locals alive), sends back one byte, and stops (cli; sleep).
 * A small n fits; a large n drives the stack through .bss, which kb_sim must
 * report as a stack collision. Markers on GPIOR1: 1 ready, 2 recursion done.
 */
#include <avr/interrupt.h>
#include <avr/io.h>
#include <avr/sleep.h>
#include <stdint.h>

#ifndef F_CPU
#error "F_CPU must be defined"
#endif
#ifndef BAUD
#define BAUD 250000UL
#endif
#include <util/setbaud.h>

#if defined(UDR0)
#define K_UDR UDR0
#define K_UCSRA UCSR0A
#define K_UCSRB UCSR0B
#define K_UBRRH UBRR0H
#define K_UBRRL UBRR0L
#define K_RXC RXC0
#define K_UDRE UDRE0
#define K_U2X U2X0
#define K_RXEN RXEN0
#define K_TXEN TXEN0
#else
#define K_UDR UDR
#define K_UCSRA UCSRA
#define K_UCSRB UCSRB
#define K_UBRRH UBRRH
#define K_UBRRL UBRRL
#define K_RXC RXC
#define K_UDRE UDRE
#define K_U2X U2X
#define K_RXEN RXEN
#define K_TXEN TXEN
#endif

volatile uint8_t g_table[8]; /* static RAM the stack must not reach */

static __attribute__((noinline)) uint8_t hog(uint8_t n)
{
	volatile uint8_t local[6];
	uint8_t i;
	for (i = 0; i < sizeof local; i++)
		local[i] = (uint8_t)(n + i);
	if (n == 0)
		return g_table[0];
	return (uint8_t)(hog((uint8_t)(n - 1)) + local[n % sizeof local]);
}

int main(void)
{
	K_UBRRH = UBRRH_VALUE;
	K_UBRRL = UBRRL_VALUE;
#if USE_2X
	K_UCSRA = (uint8_t)(1 << K_U2X);
#endif
	K_UCSRB = (uint8_t)((1 << K_RXEN) | (1 << K_TXEN));
	GPIOR1 = 1;
	while (!(K_UCSRA & (1 << K_RXC)))
		;
	uint8_t n = K_UDR;
	uint8_t r = hog(n);
	GPIOR1 = 2;
	while (!(K_UCSRA & (1 << K_UDRE)))
		;
	K_UDR = r;
	while (!(K_UCSRA & (1 << K_UDRE)))
		;
	cli();
	sleep_enable();
	sleep_cpu();
	for (;;)
		;
}
