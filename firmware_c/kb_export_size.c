/*
 * kb_export_size.c - what an exported model costs in flash and RAM: the smallest program that
 * calls every function of its API. kilobit.runtimes.export compiles it with -include of the
 * exported header, and without it for the baseline; the difference is the model's. The inputs
 * come from a volatile byte, so no call is folded away.
 */
#include <stdint.h>

volatile uint8_t kb_size_sink;

#ifdef KB_EXPORT_H
#if defined(KB_EXPORT_LEARNER) || defined(KB_EXPORT_PREDICTOR)
#define KB_SIZE_IN_T uint8_t
#else
#define KB_SIZE_IN_T int8_t
#endif
/* KB_EXPORT_INPUTS: the exported header's codes or values per input */
static KB_SIZE_IN_T kb_size_in[KB_EXPORT_INPUTS];

static void kb_size_use(void)
{
    uint16_t j;
    for (j = 0; j < KB_EXPORT_INPUTS; j++)
        kb_size_in[j] = (KB_SIZE_IN_T)(kb_size_sink & 1u);
    KB_X(init)();
#ifdef KB_PERSIST_EVERY
    kb_size_sink = KB_X(restore)();
#endif
#if defined(KB_EXPORT_LEARNER)
    {
        int32_t s = 0;
        kb_size_sink = (uint8_t)KB_X(learn)(kb_size_in, (uint8_t)(kb_size_sink & 1u), &s);
        kb_size_sink = (uint8_t)(s + KB_X(score)(kb_size_in) + KB_X(predict)(kb_size_in));
        kb_size_sink = (uint8_t)(KB_X(count)() + KB_X(memory)()[0]);
    }
#elif defined(KB_EXPORT_CLASSES)
    kb_size_sink = (uint8_t)KB_X(learn)(kb_size_in, kb_size_sink);
    kb_size_sink = (uint8_t)(KB_X(predict)(kb_size_in) + KB_X(votes)() + KB_X(classes)());
    kb_size_sink = (uint8_t)(KB_X(anchors)() + KB_X(memory)()[0]);
#else
    kb_size_sink = (uint8_t)KB_X(feature)(0, kb_size_sink);
    KB_X(reset)();
    kb_size_sink = (uint8_t)(KB_X(predict)() + KB_X(classify)(kb_size_in));
    kb_size_sink = (uint8_t)KB_X(scores)()[0];
#endif
#ifdef KB_PERSIST_EVERY
    kb_size_sink = KB_X(save)();
#endif
}
#else
static void kb_size_use(void)
{
    kb_size_sink = 0;
}
#endif

int main(void)
{
    kb_size_use();
    return kb_size_sink;
}
