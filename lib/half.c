/* half.c — IEEE binary16 conversions on the host (tests, tools and callers preparing f16 data). */
#include "config.h"
#include "ocx_internal.h"

#include <math.h>
#include <string.h>

uint16_t ocx_half_from_float(float f)
{
    uint32_t x;
    memcpy(&x, &f, sizeof x);
    uint32_t sign = (x >> 16) & 0x8000u;
    uint32_t exp = (x >> 23) & 0xffu;
    uint32_t man = x & 0x7fffffu;
    if (exp == 0xffu) /* inf or NaN (keep NaN quiet and non-zero) */
        return (uint16_t)(sign | 0x7c00u | (man ? 0x200u | (man >> 13) : 0));
    int e = (int)exp - 127 + 15;
    if (e >= 0x1f) return (uint16_t)(sign | 0x7c00u); /* overflow → inf */
    if (e <= 0) {                                      /* subnormal half or zero */
        if (e < -10) return (uint16_t)sign;
        man |= 0x800000u;
        unsigned shift = (unsigned)(14 - e);
        uint32_t half = man >> shift;
        uint32_t rem = man & ((1u << shift) - 1);
        half += rem + (half & 1u) > 1u << (shift - 1); /* nearest, ties to even (see below) */
        return (uint16_t)(sign | half);
    }
    uint32_t half = ((uint32_t)e << 10) | (man >> 13);
    /* Up when the rest is over half an ulp, or exactly half and half is odd; no branch (random data
     * mispredicted half of them: twice the time). May carry into inf: correct. */
    half += (man & 0x1fffu) + (half & 1u) > 0x1000u;
    return (uint16_t)(sign | half);
}

/* double -> half, rounded once to nearest even: the double goes to float rounded to odd (toward
 * zero, then the lowest bit set where anything was cut off), which keeps enough of it (24 bits for
 * half's 11, at least 13 more) that the float's own rounding to half is the double's. */
uint16_t ocx__half_from_double(double d)
{
    float f = (float)d;
    if (d == d && !isinf(f) && (double)f != d) {
        if (fabs((double)f) > fabs(d)) f = nextafterf(f, 0.0f);
        uint32_t b;
        memcpy(&b, &f, sizeof b);
        b |= 1u;
        memcpy(&f, &b, sizeof f);
    }
    return ocx_half_from_float(f);
}

float ocx_half_to_float(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
    uint32_t exp = (h >> 10) & 0x1fu;
    uint32_t man = h & 0x3ffu;
    uint32_t x;
    if (exp == 0x1f) {
        x = sign | 0x7f800000u | (man << 13);
    } else if (exp == 0) {
        if (man == 0) {
            x = sign;
        } else { /* normalise the subnormal */
            int e = -1;
            do {
                e++;
                man <<= 1;
            } while (!(man & 0x400u));
            x = sign | ((uint32_t)(127 - 15 - e) << 23) | ((man & 0x3ffu) << 13);
        }
    } else {
        x = sign | ((exp - 15 + 127) << 23) | (man << 13);
    }
    float f;
    memcpy(&f, &x, sizeof f);
    return f;
}
