/*
 * BananaLearner: a Random Kernel Perceptron that keeps learning on the board, from a stream
 * sent over Serial, and keeps what it learnt in the EEPROM: after a reset or a power cut it
 * goes on from its last checkpoint.
 *
 * banana.h is the model, trained on the host on Banana (2 features, 4-bit codes) and exported:
 *     kilobit train rkp --data banana --bits 4 --budget 62 -o banana.kb
 *     kilobit export banana.kb -o banana.h --name banana --runtime include
 * Any learner (rkp, ckp) exported with --name banana runs in this sketch unchanged.
 *
 * Requests, one a line at 115200 baud (the codes as `kilobit` quantizes a scaled row):
 *     L y c0 c1   learn label y (0 or 1)  -> score prediction mistake count
 *     Q c0 c1     query                   -> score prediction 0 count
 *     S           checkpoint now          -> saved | unchanged
 * It checkpoints by itself every SAVE_EVERY learning steps; at reset it says "restored N" (N
 * support vectors) or "new N" (the model as exported).
 */
#include <kilobit.h>
#include <kb_lines.h>

#include "banana.h"

#define SAVE_EVERY 16

static uint8_t learnt; /* learning steps since the last checkpoint */

void setup()
{
    Serial.begin(115200);
    banana_init();
    Serial.print(banana_restore() ? F("restored ") : F("new "));
    Serial.println(banana_count());
}

static void reply(int32_t score, int8_t mistake)
{
    Serial.print(score);
    Serial.print(score > 0 ? F(" 1 ") : F(" 0 "));
    Serial.print(mistake);
    Serial.print(' ');
    Serial.println(banana_count());
}

void loop()
{
    uint8_t codes[BANANA_DIMS];
    struct kb_request r;
    int n;
    if (!kb_request_start(&r, 1))
        return;
    n = kb_numbers(r.last, codes, BANANA_DIMS, 0, (1L << BANANA_BITS) - 1);
    if (r.ok && r.op == 'S' && n == 0) {
        Serial.println(banana_save() ? F("unchanged") : F("saved"));
    } else if (r.ok && (r.op == 'L' || r.op == 'Q') && n == BANANA_DIMS) {
        int32_t score = 0;
        int8_t mistake = 0;
        if (r.op == 'L')
            mistake = banana_learn(codes, (uint8_t)r.label, &score);
        else
            score = banana_score(codes);
        reply(score, mistake);
        if (r.op == 'L' && ++learnt == SAVE_EVERY) {
            banana_save();
            learnt = 0;
        }
    } else {
        Serial.println(F("error"));
    }
}
