/*
 * kb_smat.h - stored integer weight matrices, dense or sparse (docs/contract.md, 7.2).
 * Shared by the host-trained predictors (Bonsai, ProtoNN).
 *
 *   DENSE  (0)  rows*cols weights, row-major, wb bytes each (1: int8, 2: int16 little-endian)
 *   SPARSE (1)  the non-zero weights in row-major order, each a gap byte then the weight:
 *               gap d in 1..255: the weight is d-1 positions after the cursor, which then moves
 *               just past it; d == 0: the cursor moves 255 positions on, no weight follows.
 *
 * The bytes are read through KB_FLASH_BYTE (flash on AVR). A build may fix the weight width
 * at compile time with KB_SMAT_WBYTES (1 or 2): the hot loops then lose a branch.
 */
#ifndef KB_SMAT_H
#define KB_SMAT_H

#include <stdint.h>

#include "kb_fixed.h"

#define KB_SMAT_DENSE 0
#define KB_SMAT_SPARSE 1

#ifdef KB_SMAT_WBYTES
#define KB_WB(wb) KB_SMAT_WBYTES
#else
#define KB_WB(wb) (wb)
#endif

/* The signed weight of wb bytes at p. */
static inline int16_t kb_smat_weight(const uint8_t *p, uint8_t wb)
{
    (void)wb;
    if (KB_WB(wb) == 1)
        return (int16_t)(int8_t)KB_FLASH_BYTE(p);
    return (int16_t)(uint16_t)((uint16_t)KB_FLASH_BYTE(p) |
                               (uint16_t)((uint16_t)KB_FLASH_BYTE(p + 1) << 8));
}

/* A little-endian int16 at p (not a weight: whatever KB_SMAT_WBYTES says). */
static inline int16_t kb_flash_i16(const uint8_t *p)
{
    return (int16_t)(uint16_t)((uint16_t)KB_FLASH_BYTE(p) |
                               (uint16_t)((uint16_t)KB_FLASH_BYTE(p + 1) << 8));
}

/* 1 when p[0 .. len) is exactly one valid matrix (no weight beyond rows*cols, no stored zero
 * in SPARSE, dense length exact) whose sums of |w| -- per column (by_col) or per row, added
 * into sums[] -- stay <= limit; else 0. */
static inline int kb_smat_check(const uint8_t *p, uint32_t len, uint32_t rows, uint16_t cols,
                                uint8_t wb, uint8_t enc, int32_t *sums, int by_col,
                                int32_t limit)
{
    uint32_t i = 0, row = 0;
    uint32_t col = 0;
    if (enc == KB_SMAT_DENSE) {
        if (len != rows * cols * wb)
            return 0;
    } else if (enc != KB_SMAT_SPARSE) {
        return 0;
    }
    while (i < len) {
        int32_t w;
        uint32_t k;
        if (enc == KB_SMAT_SPARSE) {
            const uint8_t g = KB_FLASH_BYTE(p + i);
            i++;
            col += g == 0 ? 255u : (uint32_t)g - 1u;
            while (col >= cols) {
                col -= cols;
                row++;
            }
            if (g == 0)
                continue;
            if (row >= rows || i + wb > len)
                return 0;
        }
        w = kb_smat_weight(p + i, wb);
        i += wb;
        if ((enc == KB_SMAT_SPARSE && w == 0) || w == (wb == 1 ? -128 : -32768))
            return 0; /* a stored zero, or outside the symmetric range -qmax .. qmax */
        k = by_col ? col : row;
        sums[k] += w < 0 ? -w : w;
        if (sums[k] > limit)
            return 0;
        if (++col == cols) {
            col = 0;
            row++;
        }
    }
    return 1;
}

/* dots[r] = sum_c M[r][c] * vec[c] for r < nrows (M: the stored matrix at p[0 .. len)). The
 * caller guarantees (kb_smat_check) that every sum stays within +-KB_SMALL. */
static inline void kb_smat_row_dots(const uint8_t *p, uint16_t len, uint8_t cols, uint8_t wb,
                                    uint8_t enc, const int16_t *vec, int32_t *dots,
                                    uint8_t nrows)
{
    uint16_t i = 0;
    uint8_t r, c;
    if (enc == KB_SMAT_DENSE) {
        for (r = 0; r < nrows; r++) {
            int32_t s = 0;
            for (c = 0; c < cols; c++) {
                s += (int32_t)kb_smat_weight(p + i, wb) * vec[c];
                i = (uint16_t)(i + KB_WB(wb));
            }
            dots[r] = s;
        }
        return;
    }
    {
        uint16_t col = 0;
        uint8_t row = 0;
        for (r = 0; r < nrows; r++)
            dots[r] = 0;
        while (i < len) {
            const uint8_t g = KB_FLASH_BYTE(p + i);
            i++;
            col = (uint16_t)(col + (g == 0 ? 255u : (uint16_t)(g - 1u)));
            while (col >= cols) {
                col = (uint16_t)(col - cols);
                row++;
            }
            if (g == 0)
                continue;
            dots[row] += (int32_t)kb_smat_weight(p + i, wb) * vec[col];
            i = (uint16_t)(i + KB_WB(wb));
            col++;
        }
    }
}

#endif /* KB_SMAT_H */
