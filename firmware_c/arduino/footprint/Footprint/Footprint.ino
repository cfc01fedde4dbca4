/*
 * Footprint: a sketch holding only a model (model.h, exported with --name model), against
 * Empty.ino, the same Serial loop without it: `kilobit bench export` builds both and reports
 * the difference in flash and RAM, and the stack a step takes in simulation. An input is sent
 * as raw bytes (a learner's label first) and answered with one byte.
 */
#include "model.h"

#if defined(MODEL_KIND_LEARNER) || defined(MODEL_KIND_CLASSES)
#define IN_BYTES (1 + MODEL_DIMS)
#else
#define IN_BYTES MODEL_DIMS
#endif

static uint8_t in[IN_BYTES];
static uint16_t got;

void setup()
{
    Serial.begin(115200);
    model_init();
#if defined(MODEL_CHECKPOINTS) && defined(__AVR__)
    model_restore();
#endif
}

void loop()
{
    uint8_t out;
    if (Serial.available() == 0)
        return;
    in[got++] = (uint8_t)Serial.read();
    if (got < IN_BYTES)
        return;
    got = 0;
#if defined(MODEL_KIND_LEARNER)
    out = (uint8_t)model_learn(in + 1, (uint8_t)(in[0] & 1u), 0);
#elif defined(MODEL_KIND_CLASSES)
    out = (uint8_t)model_learn((const int8_t *)in + 1, in[0]);
#else
    out = (uint8_t)model_classify(in);
#endif
#if defined(MODEL_CHECKPOINTS) && defined(__AVR__)
    out = (uint8_t)(out + model_save());
#endif
    Serial.write(out);
}
