/*
 * rkp_check_config.h - a compile-time RKP configuration: the paper's ATtiny2313 Banana setting
 * (laplace, B = 4, M = 2, T = 62 support vectors in 70 bytes, A = -6, C = 255).
 *
 * It has the shape of the header the host will generate from a model; avr/rkp_check.c builds
 * it for AVR, and the host build kb_replay_const runs it against the integer reference.
 */
#ifndef RKP_CHECK_CONFIG_H
#define RKP_CHECK_CONFIG_H

#define KB_RKP_CONST
#define KB_RKP_CONST_KERNEL 0 /* laplace */
#define KB_RKP_CONST_BITS 4
#define KB_RKP_CONST_DIMS 2
#define KB_RKP_CONST_BUDGET 62
#define KB_RKP_CONST_C 255
#define KB_RKP_CONST_NTAB 1
#define KB_RKP_CONST_TABLE_INIT {5} /* kilobit.models.rkp.power_table("laplace", 4, -6, 255) */

#ifdef __AVR__
#define KB_TABLE_PROGMEM /* 1 byte here, but a generated table can have 32 */
#endif

#endif /* RKP_CHECK_CONFIG_H */
