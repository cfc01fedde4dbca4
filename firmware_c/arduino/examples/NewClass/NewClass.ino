/*
 * NewClass: an associative memory that learns a class it has never seen, on the board, from a
 * few examples sent over Serial, and tells it from the others right after. A class learnt
 * here is checkpointed to the EEPROM at once, so it survives a reset.
 *
 * digits.h is the model, trained on the host on the pendigits digits 0, 1 and 2 with a fourth
 * class slot left free, and exported:
 *     kilobit train assoc --data digits012.csv --P 4 --kt 4 --bits 4 --cap 4 -o digits.kb
 *     kilobit export digits.kb -o digits.h --name digits --runtime include
 * (`kilobit export --arduino-library` writes digits012.csv from pendigits-10.)
 *
 * Requests, one a line at 115200 baud (values DIGITS_MIN .. DIGITS_MAX, as `kilobit` maps a
 * scaled row):
 *     L y v0 .. v15   learn label y (0..255)  -> prediction votes classes anchors
 *     Q v0 .. v15     query                   -> prediction votes classes anchors
 * The prediction is made before learning; -1: no class known yet. "full": a new label when
 * every class slot is taken.
 */
#include <kilobit.h>
#include <kb_lines.h>

#include "digits.h"

void setup()
{
    Serial.begin(115200);
    digits_init();
    Serial.print(digits_restore() ? F("restored ") : F("new "));
    Serial.println(digits_classes());
}

void loop()
{
    int8_t values[DIGITS_DIMS];
    struct kb_request r;
    int16_t pred;
    if (!kb_request_start(&r, 255))
        return;
    if (kb_numbers(r.last, values, DIGITS_DIMS, DIGITS_MIN, DIGITS_MAX) != DIGITS_DIMS ||
        !r.ok || (r.op != 'L' && r.op != 'Q')) {
        Serial.println(F("error"));
        return;
    }
    if (r.op == 'L') {
        const uint8_t known = digits_classes();
        pred = digits_learn(values, (uint8_t)r.label);
        if (pred == DIGITS_FULL) {
            Serial.println(F("full"));
            return;
        }
        if (digits_classes() != known)
            digits_save();
    } else {
        pred = digits_predict(values);
    }
    Serial.print(pred);
    Serial.print(' ');
    Serial.print(digits_votes());
    Serial.print(' ');
    Serial.print(digits_classes());
    Serial.print(' ');
    Serial.println(digits_anchors());
}
