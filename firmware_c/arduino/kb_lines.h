/*
 * kb_lines.h - the examples' requests over Serial, read a token at a time as they arrive: an op
 * letter, integers, the end of the line. Nothing buffers a whole line: a classifier takes each
 * feature as its number ends, so an input of any width costs no RAM. The same lines as
 * kilobit's golden steps ("L 1 3 7", "Q 3 7", "P 12 0 255 ..."), so a host program or the
 * tests can drive a sketch with them.
 */
#ifndef KB_LINES_H
#define KB_LINES_H

#include <Arduino.h>

#define KB_TOKEN_END 0  /* the end of the line */
#define KB_TOKEN_NUM 1  /* an integer */
#define KB_TOKEN_WORD 2 /* a letter (the rest of its word is skipped) */

static int kb_lines_back = -1; /* a character read one too far */

static inline int kb_lines_getc(void)
{
    int c = kb_lines_back;
    kb_lines_back = -1;
    while (c < 0)
        c = Serial.read(); /* -1 while nothing has come */
    return c;
}

/* The next token of the request; *v is the integer or the letter. */
static inline uint8_t kb_token(long *v)
{
    int c, sign = 1;
    do
        c = kb_lines_getc();
    while (c == ' ' || c == '\t' || c == '\r' || c == ',');
    if (c == '\n')
        return KB_TOKEN_END;
    if (c == '-') {
        sign = -1;
        c = kb_lines_getc();
    }
    if (c >= '0' && c <= '9') {
        long n = 0;
        while (c >= '0' && c <= '9') {
            n = 10 * n + (c - '0');
            c = kb_lines_getc();
        }
        kb_lines_back = c;
        *v = sign * n;
        return KB_TOKEN_NUM;
    }
    *v = c;
    while (c != ' ' && c != '\n')
        c = kb_lines_getc();
    kb_lines_back = c;
    return KB_TOKEN_WORD;
}

/* The start of a request: its op letter and, for a learning step ('L'), its label. */
struct kb_request {
    long op, label;
    uint8_t last; /* the last token read: kb_numbers goes on from it */
    uint8_t ok;   /* 0: no op letter first, or a label outside 0 .. label_max */
};

/* Reads the start of a request into *r; 0 for an empty line (nothing to answer). */
static inline uint8_t kb_request_start(struct kb_request *r, long label_max)
{
    r->label = 0;
    r->last = kb_token(&r->op);
    if (r->last == KB_TOKEN_END)
        return 0;
    r->ok = (uint8_t)(r->last == KB_TOKEN_WORD);
    if (r->ok && r->op == 'L') {
        r->last = kb_token(&r->label);
        r->ok = (uint8_t)(r->last == KB_TOKEN_NUM && r->label >= 0 && r->label <= label_max);
    }
    return 1;
}

/* The numbers up to the end of the line into v[0 .. max-1], each in lo .. hi; `t` is the last
 * token read (the line may have ended with it). Returns how many came, or -1 when there were
 * more than max, or one was out of range or not a number: the line is read to its end anyway,
 * so the next request starts clean. */
template <typename T>
static inline int kb_numbers(uint8_t t, T *v, uint8_t max, long lo, long hi)
{
    long x;
    int n = 0, ok = 1;
    while (t != KB_TOKEN_END && (t = kb_token(&x)) != KB_TOKEN_END) {
        if (t == KB_TOKEN_NUM && n < max && x >= lo && x <= hi)
            v[n] = (T)x;
        else
            ok = 0;
        n++;
    }
    return ok ? n : -1;
}

#endif /* KB_LINES_H */
