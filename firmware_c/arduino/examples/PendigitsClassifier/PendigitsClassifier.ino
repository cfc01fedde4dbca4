/*
 * PendigitsClassifier: a Bonsai tree that reads handwritten digits on the board, from the 16
 * pen-trajectory features of UCI's pendigits sent over Serial. The features stream in: each
 * is taken as its number ends, so no buffer holds the input, however wide.
 *
 * pendigits.h is the model, trained on the host and exported:
 *     kilobit train bonsai --data pendigits-10 --depth 1 --proj 6 --epochs 3,6,3 -o pendigits.kb
 *     kilobit export pendigits.kb -o pendigits.h --name pendigits --runtime include
 * Any predictor (bonsai, protonn) exported with --name pendigits runs in this sketch unchanged.
 *
 * Request, one a line at 115200 baud (the codes as `kilobit` quantizes a scaled row):
 *     P c0 c1 .. c15   -> class s0 s1 .. (the class, then the score of each class)
 */
#include <kilobit.h>
#include <kb_lines.h>

#include "pendigits.h"

void setup()
{
    Serial.begin(115200);
    pendigits_init();
    Serial.println(F("ready"));
}

void loop()
{
    struct kb_request r;
    long v;
    uint16_t j = 0;
    uint8_t k, t, ok;
    const int32_t *scores;
    if (!kb_request_start(&r, 0))
        return;
    t = r.last;
    ok = (uint8_t)(r.ok && r.op == 'P');
    while (t != KB_TOKEN_END && (t = kb_token(&v)) != KB_TOKEN_END) {
        if (t != KB_TOKEN_NUM || v < 0 || v > 255 || pendigits_feature(j, (uint8_t)v) != 0)
            ok = 0; /* a feature out of order or out of range */
        j++;
    }
    if (!ok || j != PENDIGITS_DIMS) {
        pendigits_reset();
        Serial.println(F("error"));
        return;
    }
    Serial.print(pendigits_predict());
    scores = pendigits_scores();
    for (k = 0; k < PENDIGITS_SCORES; k++) {
        Serial.print(' ');
        Serial.print(scores[k]);
    }
    Serial.println();
}
