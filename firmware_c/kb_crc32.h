/*
 * kb_crc32.h - CRC-32 (IEEE 802.3, reflected polynomial 0xEDB88320), equal to zlib.crc32.
 *
 * Bitwise on purpose: a 1 KiB lookup table would be half of an ATtiny2313's flash, and the CRC
 * runs once per model load, where speed does not matter.
 */
#ifndef KB_CRC32_H
#define KB_CRC32_H

#include <stddef.h>
#include <stdint.h>

/* Continue a CRC over more bytes; start with crc = 0 (as zlib.crc32(data, 0)). */
static inline uint32_t kb_crc32_update(uint32_t crc, const uint8_t *data, size_t len)
{
    crc = ~crc;
    while (len--) {
        uint8_t k;
        crc ^= *data++;
        for (k = 0; k < 8; k++)
            crc = (crc >> 1) ^ ((crc & 1u) ? UINT32_C(0xEDB88320) : UINT32_C(0));
    }
    return ~crc;
}

static inline uint32_t kb_crc32(const uint8_t *data, size_t len)
{
    return kb_crc32_update(0, data, len);
}

#endif /* KB_CRC32_H */
