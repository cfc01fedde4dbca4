/*
 * kb_tool.h - what the host replay tools (kb_replay, kb_predict, kb_assoc_replay) share: the
 * error exit and the tokens of a step line. Host only (stdio, exit); no malloc.
 */
#ifndef KB_TOOL_H
#define KB_TOOL_H

#include <stdio.h>
#include <stdlib.h>

/* "error: [step N: ]what" on stderr after what stdout has so far, then exit(status). */
static inline void kb_die(int status, const char *what, unsigned long step)
{
    fflush(stdout);
    if (step)
        fprintf(stderr, "error: step %lu: %s\n", step, what);
    else
        fprintf(stderr, "error: %s\n", what);
    exit(status);
}

static inline int kb_is_space(char c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

static inline const char *kb_skip_space(const char *s)
{
    while (kb_is_space(*s))
        s++;
    return s;
}

/* Parse an unsigned decimal token at *s that is at most `max`; advance past it. Signs, other
 * bases and trailing garbage are refused (strtoul would accept "-1", "+1" and " 0x1"). */
static inline int kb_parse_uint(const char **s, unsigned long max, unsigned long *value)
{
    const char *p = *s;
    unsigned long v = 0;
    if (*p < '0' || *p > '9')
        return 0;
    while (*p >= '0' && *p <= '9') {
        v = v * 10u + (unsigned long)(*p - '0');
        if (v > max)
            return 0;
        p++;
    }
    if (*p != '\0' && !kb_is_space(*p))
        return 0;
    *s = p;
    *value = v;
    return 1;
}

#endif /* KB_TOOL_H */
